import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";

/** A brain that calls out, with the given fallback list. */
function brain(fallback?: string[]): Record<string, unknown> {
  return {
    type: "openai",
    base_url: "http://127.0.0.1:11434/v1",
    model: "llama3.2",
    ...(fallback === undefined ? {} : { fallback }),
  };
}

function problemsOf(brains: Record<string, unknown>): { path: string; message: string; fix: string }[] {
  const result = validateConfig(configDocument({}, { routes: [{ channel: "webhook", brain: "local" }], brains }));
  if (result.ok) throw new Error("expected the configuration to be rejected");
  return [...result.problems];
}

describe("validateConfig: fallback brains", () => {
  it("accepts a chain of known brains, the built-in echo included", () => {
    const result = validateConfig(
      configDocument(
        {},
        {
          routes: [{ channel: "webhook", brain: "local" }],
          brains: { local: brain(["hosted", "echo"]), hosted: brain(["echo"]) },
        },
      ),
    );
    expect(result.ok).toBe(true);
  });

  it("refuses an unknown fallback name at its path, naming the brains there are", () => {
    expect(problemsOf({ local: brain(["hosted", "hostd"]), hosted: brain() })).toEqual([
      {
        path: "brains.local.fallback[1]",
        message: 'no brain is named "hostd"',
        fix: 'use one of "echo", "hosted", or define it under "brains"',
      },
    ]);
  });

  it("refuses a brain that names itself", () => {
    expect(problemsOf({ local: brain(["local"]) })).toEqual([
      expect.objectContaining({
        path: "brains.local.fallback[0]",
        message: 'brain "local" names itself as its fallback',
        fix: expect.stringContaining("remove it"),
      }),
    ]);
  });

  it("refuses a cycle a → b → a once, at the entry that closes it", () => {
    expect(problemsOf({ local: brain(["hosted"]), hosted: brain(["local"]) })).toEqual([
      {
        path: "brains.hosted.fallback[0]",
        message: 'the fallbacks form a cycle: "local" → "hosted" → "local"',
        fix: 'remove "local" here or break the cycle elsewhere: a fallback chain must end',
      },
    ]);
  });

  it("refuses a longer cycle that does not start at the routed brain", () => {
    const problems = problemsOf({
      local: brain(["a"]),
      a: brain(["b"]),
      b: brain(["c", "echo"]),
      c: brain(["a"]),
    });
    expect(problems).toEqual([
      expect.objectContaining({
        path: "brains.c.fallback[0]",
        message: 'the fallbacks form a cycle: "a" → "b" → "c" → "a"',
      }),
    ]);
  });

  it("refuses a name listed twice", () => {
    expect(problemsOf({ local: brain(["hosted", "hosted"]), hosted: brain() })).toEqual([
      {
        path: "brains.local.fallback[1]",
        message: '"hosted" is already listed at fallback[0]',
        fix: "list each brain once",
      },
    ]);
  });

  it("refuses a fallback on echo, which never fails", () => {
    expect(problemsOf({ local: brain(), mirror: { type: "echo", fallback: ["local"] } })).toEqual([
      expect.objectContaining({ path: "brains.mirror.fallback", message: 'unknown key "fallback"' }),
    ]);
  });

  it("refuses a fallback list that is not a list of names", () => {
    expect(problemsOf({ local: { ...brain(), fallback: "hosted" } })).toEqual([
      expect.objectContaining({ path: "brains.local.fallback", message: expect.stringContaining("expected an array") }),
    ]);
  });
});
