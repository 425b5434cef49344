// What `dist/` needs at run time is installed by `npm ci --omit=dev` (the image, `npm prune`,
// an npm install of the package): every package a bundle imports is one of `dependencies`.
// Runs against dist/.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const root = join(import.meta.dirname, "..", "..");

/** The package of a bare specifier (`@scope/name/sub` is `@scope/name`); undefined for `node:` and relative ones. */
function packageOf(specifier: string): string | undefined {
  if (specifier.startsWith(".") || specifier.startsWith("node:")) return undefined;
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

describe("the built service's imports", () => {
  it("are all production dependencies, so a pruned install runs every entry point", () => {
    const manifest = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const imported = new Map<string, string>();
    const dist = join(root, "dist");
    for (const file of readdirSync(dist).filter((name) => name.endsWith(".js"))) {
      const text = readFileSync(join(dist, file), "utf8");
      for (const match of text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)["']([^"']+)["']/g)) {
        const name = match[1] === undefined ? undefined : packageOf(match[1]);
        if (name !== undefined) imported.set(name, file);
      }
    }
    expect(imported.size).toBeGreaterThan(0);
    const missing = [...imported].filter(([name]) => !(name in manifest.dependencies));
    expect(missing).toEqual([]);
  });
});
