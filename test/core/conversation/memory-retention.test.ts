import { describe, expect, it } from "vitest";
import { isRetained, retentionCutoff } from "../../../src/core/conversation/memory-retention.js";

const HOUR = 3_600_000;

describe("the conversation memory's retention", () => {
  it("cuts off turns older than the retention, counted back from now", () => {
    expect(retentionCutoff(100 * HOUR, 24)).toBe(76 * HOUR);
    expect(retentionCutoff(1_000 * HOUR, 720)).toBe(280 * HOUR);
  });

  it("keeps a turn at the cutoff and after it, not before", () => {
    const cutoff = retentionCutoff(100 * HOUR, 1);
    expect(isRetained({ role: "user", text: "at", at: cutoff }, cutoff)).toBe(true);
    expect(isRetained({ role: "user", text: "after", at: cutoff + 1 }, cutoff)).toBe(true);
    expect(isRetained({ role: "user", text: "before", at: cutoff - 1 }, cutoff)).toBe(false);
  });
});
