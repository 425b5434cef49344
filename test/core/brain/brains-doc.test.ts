import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";

const readme = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
// The README's "## Brains" section, up to the next top-level section.
const doc = readme.slice(readme.indexOf("## Brains"), readme.indexOf("\n## ", readme.indexOf("## Brains") + 1));
const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");

describe("the README's Brains section", () => {
  it("has only valid JSON examples", () => {
    expect(blocks.length).toBeGreaterThan(6);
    for (const block of blocks) expect(() => JSON.parse(block), block).not.toThrow();
  });

  it("has a complete, valid configuration for every brain type, Ollama included", () => {
    const configs = blocks
      .map((block) => JSON.parse(block) as Record<string, unknown>)
      .filter((json) => "channels" in json);
    const types = new Set<string>();
    for (const config of configs) {
      const result = validateConfig(config);
      expect(result.ok, JSON.stringify(result.ok ? [] : result.problems)).toBe(true);
      if (!result.ok) continue;
      for (const brain of Object.values(result.config.brains ?? {})) types.add(brain.type);
    }
    expect([...types].sort()).toEqual(["http", "openai", "rasa", "workers-ai"]);
    expect(doc).toContain('"base_url": "http://127.0.0.1:11434/v1"');
  });
});
