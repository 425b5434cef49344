import { existsSync, readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../../", import.meta.url);
const pages = readdirSync(new URL("docs/", root))
  .filter((name) => name.endsWith(".md"))
  .map((name) => `docs/${name}`);
const files = ["README.md", ...pages];
const read = (file: string): string => readFileSync(new URL(file, root), "utf8");

/** Files other issues add; a link to one is checked once it exists. */
const WRITTEN_ELSEWHERE = new Set(["docs/deployment.md", "LICENSE"]);

/** The text outside fenced code blocks. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's heading ids, and explicit `<a id>` anchors. */
function anchors(markdown: string): Set<string> {
  const ids = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = (heading ?? "")
      .toLowerCase()
      .replace(/[^\p{L}\p{N} _-]/gu, "")
      .replaceAll(" ", "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    ids.add(count === 0 ? slug : `${slug}-${count}`);
  }
  for (const [, id] of markdown.matchAll(/<a id="([^"]+)"><\/a>/g)) ids.add(id ?? "");
  return ids;
}

function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? "");
}

describe("README.md and docs/", () => {
  it.each(files)("%s: every relative link and anchor resolves", (file) => {
    const broken: string[] = [];
    for (const link of links(read(file))) {
      if (/^[a-z]+:/.test(link)) continue;
      const [path = "", fragment] = link.split("#");
      const target = path === "" ? file : new URL(path, new URL(file, root)).href.slice(root.href.length);
      if (!existsSync(new URL(target, root))) {
        if (!WRITTEN_ELSEWHERE.has(target)) broken.push(`${link} (no file ${target})`);
        continue;
      }
      if (fragment !== undefined && target.endsWith(".md") && !anchors(read(target)).has(fragment)) {
        broken.push(`${link} (no heading #${fragment} in ${target})`);
      }
    }
    expect(broken).toEqual([]);
  });

  it("README.md stays a front door: at most 200 lines, the two commands, a link to every page", () => {
    const readme = read("README.md");
    expect(readme.split("\n").length).toBeLessThanOrEqual(201);
    expect(readme).toContain("npm ci && WEBHOOK_SECRET=dev-secret npm run demo");
    expect(readme).toContain("npm ci && npm run test:tools && npm test");
    expect(readme).toContain("node dist/node.js");
    const linked = new Set(links(readme).map((link) => link.split("#")[0]));
    for (const page of [...pages, "docs/deployment.md"]) expect(linked, page).toContain(page);
  });

  it("README.md says why each dependency of package.json is there", () => {
    const manifest = JSON.parse(read("package.json")) as Record<string, Record<string, string> | undefined>;
    const names = [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.devDependencies ?? {})];
    const section = read("README.md").split("\n## Dependencies")[1]?.split("\n## ")[0] ?? "";
    const missing = names.filter((name) => !section.includes(`\`${name}\``));
    expect(missing, "add a row to the README's Dependencies table").toEqual([]);
  });

  it.each(pages)("%s links back to the README", (page) => {
    expect(links(read(page))).toContain("../README.md");
  });
});
