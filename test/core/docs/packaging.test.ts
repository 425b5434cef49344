/**
 * The first-hour stumbles about pointers and packaging (issue 16: 10, 11, 12, 13): every file
 * that points a newcomer somewhere points at something that exists, and the package says what
 * it is, under which license, and what it ships.
 */
import { existsSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const read = (path: string): string => readFileSync(`${root}${path}`, "utf8");

describe("pointers and packaging", () => {
  it("wrangler.toml's first line points at a docs page that exists", () => {
    const firstLine = read("wrangler.toml").split("\n")[0] ?? "";
    const pages = firstLine.match(/docs\/[a-z-]+\.md/g) ?? [];
    expect(pages.length).toBeGreaterThan(0);
    for (const page of pages) expect(existsSync(`${root}${page}`), page).toBe(true);
  });

  it("the README says where the demo's configuration comes from, not 'embedded defaults'", () => {
    const readme = read("README.md");
    expect(readme).not.toContain("embedded defaults");
    expect(readme).toContain("config.json");
  });

  it("the CLI page lists every command, dead-letters included, and the receiver's options", () => {
    const cli = read("docs/cli.md");
    for (const command of [
      "serve",
      "config check",
      "dead-letters list",
      "dead-letters replay",
      "secret",
      "keypair",
      "public-key",
      "schema",
    ]) {
      expect(cli, command).toContain(`npx webhook-channel ${command}`);
    }
    expect(cli).toContain("--port");
  });

  it("CI runs exactly the README's test command, the second line of its first block", () => {
    const second = read("README.md").split("```sh\n")[1]?.split("\n")[1] ?? "";
    const command = second.split("   #")[0]?.trim() ?? "";
    expect(command).toMatch(/^npm ci && npm run test:tools && npm test && .*npm run test:image$/);
    const ci = read(".ci/run").trim().split("\n").at(-1);
    expect(ci).toBe(command);
  });

  it("the container image's default configuration is valid", () => {
    const result = validateConfig(JSON.parse(read("deploy/container/config.json")));
    expect(result.ok).toBe(true);
  });

  it("package.json names its license, repository, entry points, files and engines", () => {
    const manifest = JSON.parse(read("package.json")) as Record<string, unknown>;
    for (const key of ["description", "license", "repository", "keywords", "files", "exports", "engines", "bin"]) {
      expect(manifest[key], key).toBeDefined();
    }
    expect(manifest.license).toBe("MIT");
    expect(read("LICENSE")).toContain("MIT License");
    expect(read("CHANGELOG.md")).toContain("## [Unreleased]");
  });
});
