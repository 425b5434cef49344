import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = new URL("../../../", import.meta.url);
const docFile = new URL("docs/configuration.md", root);
const schema = JSON.parse(readFileSync(new URL("config.schema.json", root), "utf8")) as Record<string, unknown>;

/** docs/configuration.md as scripts/config-doc.mjs would write it now, from config.schema.json. */
function regenerated(): string {
  return execFileSync(process.execPath, ["scripts/config-doc.mjs", "--stdout"], {
    cwd: fileURLToPath(root),
    encoding: "utf8",
  });
}

/** Every property path of the schema, in the table's notation (`channels[].webhook.bind`). */
function schemaPaths(node: Record<string, unknown>, prefix: string): string[] {
  const properties = (node.properties ?? {}) as Record<string, Record<string, unknown>>;
  return Object.entries(properties).flatMap(([key, child]) => {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    const items = child.items as Record<string, unknown> | undefined;
    if (child.type === "array" && items?.type === "object") return [path, ...schemaPaths(items, `${path}[]`)];
    return [path, ...schemaPaths(child, path)];
  });
}

describe("docs/configuration.md", () => {
  it("has the key tables generated from config.schema.json", () => {
    expect(
      readFileSync(docFile, "utf8"),
      "docs/configuration.md is stale: run node scripts/config-doc.mjs (after npm run schema)",
    ).toBe(regenerated());
  });

  it("documents every key of the schema, brain keys included", () => {
    const doc = readFileSync(docFile, "utf8");
    const brains = (schema.properties as Record<string, Record<string, unknown>>).brains;
    const variants = ((brains?.additionalProperties as Record<string, unknown>)?.oneOf ?? []) as Record<
      string,
      unknown
    >[];
    const paths = [...schemaPaths(schema, ""), ...variants.flatMap((variant) => schemaPaths(variant, "brains.<name>"))];
    expect(paths.length).toBeGreaterThan(30);
    for (const path of paths) expect(doc, path).toContain(`| \`${path}\` |`);
    for (const variant of variants) {
      const type = (variant.properties as Record<string, Record<string, unknown>>).type?.const;
      expect(doc).toContain(`#### \`${String(type)}\``);
    }
  });
});
