import { describe, expect, it } from "vitest";
import { DEFAULT_BRAIN_CONCURRENCY, MAX_BRAIN_CONCURRENCY } from "../../../src/core/config/brain-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";

const BRAINS: Readonly<Record<string, Record<string, unknown>>> = {
  openai: { type: "openai", base_url: "http://127.0.0.1:11434/v1", model: "llama3.2" },
  http: { type: "http", url: "http://127.0.0.1:5000/bot" },
  rasa: { type: "rasa", url: "http://127.0.0.1:5005" },
  "workers-ai": { type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct" },
};

function validate(brain: Record<string, unknown>) {
  return validateConfig({
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:8091/r" } }],
    routes: [{ channel: "webhook", brain: "b" }],
    brains: { b: brain },
  });
}

function problemsOf(brain: Record<string, unknown>): { path: string; message: string }[] {
  const result = validate(brain);
  return result.ok ? [] : result.problems.map(({ path, message }) => ({ path, message }));
}

describe("brains.<name>.max_concurrency", () => {
  for (const [type, brain] of Object.entries(BRAINS)) {
    it(`is ${DEFAULT_BRAIN_CONCURRENCY} by default on a "${type}" brain, and takes a whole number from 1 to ${MAX_BRAIN_CONCURRENCY}`, () => {
      const byDefault = validate(brain);
      if (!byDefault.ok) throw new Error(JSON.stringify(byDefault.problems));
      expect(byDefault.config.brains?.b).toMatchObject({ max_concurrency: 16 });
      for (const value of [1, 4, MAX_BRAIN_CONCURRENCY]) {
        const result = validate({ ...brain, max_concurrency: value });
        if (!result.ok) throw new Error(JSON.stringify(result.problems));
        expect(result.config.brains?.b).toMatchObject({ max_concurrency: value });
      }
    });
  }

  it("refuses 0, with the path and what it must be", () => {
    expect(problemsOf({ ...BRAINS.openai, max_concurrency: 0 })).toEqual([
      { path: "brains.b.max_concurrency", message: "must be at least 1" },
    ]);
  });

  it("refuses a fraction such as 1.5", () => {
    expect(problemsOf({ ...BRAINS.http, max_concurrency: 1.5 })).toEqual([
      { path: "brains.b.max_concurrency", message: "expected a whole number, found the number 1.5" },
    ]);
  });

  it("refuses more than the largest cap, and a string", () => {
    expect(problemsOf({ ...BRAINS.rasa, max_concurrency: MAX_BRAIN_CONCURRENCY + 1 })).toEqual([
      { path: "brains.b.max_concurrency", message: `must be at most ${MAX_BRAIN_CONCURRENCY}` },
    ]);
    expect(problemsOf({ ...BRAINS.rasa, max_concurrency: "4" })).toEqual([
      { path: "brains.b.max_concurrency", message: 'expected a number, found the string "4"' },
    ]);
  });

  it("is not a key of an echo brain, which calls nothing and is never limited", () => {
    expect(problemsOf({ type: "echo", max_concurrency: 4 })).toEqual([
      { path: "brains.b.max_concurrency", message: 'unknown key "max_concurrency"' },
    ]);
  });
});
