import { describe, expect, it } from "vitest";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import { MAX_CONFIG_DEPTH } from "../../../src/core/config/nesting-depth.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { problemsOf } from "./validate-config-problems.js";

// A document nested thousands of levels deep overflowed the stack of the walk that looks for
// secrets: `config check` and the service died with a RangeError instead of naming the place.

/** `{ ...a valid document, [key]: <text parsed> }`, parsed from text as a file would be. */
function withRaw(key: string, raw: string): unknown {
  const valid = JSON.stringify(configDocument());
  return JSON.parse(`${valid.slice(0, -1)},${JSON.stringify(key)}:${raw}}`);
}

const arrays = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`;
const objects = (depth: number): string => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

describe("a configuration nested too deep", () => {
  it.each([2_000, 20_000])("is refused with the path and the fix, not a stack overflow (%i arrays)", (depth) => {
    const problems = problemsOf(withRaw("x", arrays(depth)));
    const path = `x${"[0]".repeat(MAX_CONFIG_DEPTH - 1)}`;
    expect(problems.map(formatProblem)).toEqual([
      `${path}: is nested deeper than ${MAX_CONFIG_DEPTH} levels of arrays and objects, far deeper than any key of the configuration. Fix: remove the nesting (config.schema.json shows where each key goes)`,
    ]);
  });

  it("is refused for objects too, at any key", () => {
    const [problem] = problemsOf(withRaw("brains", objects(5_000)));
    expect(problem?.path).toBe(`brains${".a".repeat(MAX_CONFIG_DEPTH - 1)}`);
    expect(problem?.message).toContain(`nested deeper than ${MAX_CONFIG_DEPTH} levels`);
  });

  it("is told apart from a merely unknown key nested within the limit", () => {
    const problems = problemsOf(withRaw("x", arrays(MAX_CONFIG_DEPTH - 1)));
    expect(problems.map((problem) => problem.path)).toEqual(["x"]);
    expect(problems[0]?.message).toBe('unknown key "x"');
  });

  it("leaves every real configuration alone", () => {
    const result = validateConfig(
      configDocument(
        { delivery: { timeout_ms: 1_000 }, mapping: { text: "message" } },
        { brains: { b: { type: "http", url: "http://127.0.0.1:5000/bot", fallback: ["echo"] } } },
      ),
    );
    expect(result.ok).toBe(true);
  });
});
