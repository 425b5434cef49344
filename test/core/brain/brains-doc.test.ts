import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";

// The brains page: every brain type, with the configurations a user copies from it.
const doc = readFileSync(new URL("../../../docs/brains.md", import.meta.url), "utf8");
const blocks = [...doc.matchAll(/```json\n([\s\S]*?)```/g)].map((match) => match[1] ?? "");

describe("docs/brains.md", () => {
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
