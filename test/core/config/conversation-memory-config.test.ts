import { describe, expect, it } from "vitest";
import { configJsonSchema } from "../../../src/core/config/config-json-schema.js";
import { formatProblem } from "../../../src/core/config/config-problem.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { problemsOf } from "./validate-config-problems.js";

const withRetention = (value: unknown) => configDocument({}, { conversation_memory: { retention_hours: value } });

describe("conversation_memory", () => {
  it("keeps turns 720 hours (30 days) when absent, or when its retention is not set", () => {
    for (const document of [configDocument(), configDocument({}, { conversation_memory: {} })]) {
      const result = validateConfig(document);
      expect(result.ok && result.config.conversation_memory).toEqual({ retention_hours: 720 });
    }
  });

  it.each([1, 24, 87_600])("accepts a retention of %i hours", (hours) => {
    const result = validateConfig(withRetention(hours));
    expect(result.ok && result.config.conversation_memory.retention_hours).toBe(hours);
  });

  it.each([
    [0, "must be 1 or more. Fix: change the value to fit the limit above"],
    [87_601, "must be at most 87600 (ten years). Fix: change the value to fit the limit above"],
    [1.5, "expected a whole number, found the number 1.5. Fix: it must be a whole number of hours"],
    ["24", 'expected a number, found the string "24". Fix: it must be a whole number of hours'],
  ])("refuses a retention of %j, naming the path and the fix", (value, says) => {
    expect(problemsOf(withRetention(value)).map(formatProblem)).toEqual([
      `conversation_memory.retention_hours: ${says}`,
    ]);
  });

  it("refuses an unknown key, naming it", () => {
    expect(problemsOf(configDocument({}, { conversation_memory: { retention_days: 30 } })).map(formatProblem)).toEqual([
      'conversation_memory.retention_days: unknown key "retention_days". Fix: remove it or correct its spelling (see config.schema.json for the allowed keys)',
    ]);
  });

  it("is bounded in config.schema.json too, so that editors flag it", () => {
    const properties = configJsonSchema().properties as Record<
      string,
      { properties?: Record<string, { minimum?: number; maximum?: number; default?: number }> }
    >;
    expect(properties.conversation_memory?.properties?.retention_hours).toMatchObject({
      minimum: 1,
      maximum: 87_600,
      default: 720,
    });
  });
});
