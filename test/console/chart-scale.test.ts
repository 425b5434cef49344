import { describe, expect, it } from "vitest";
import { niceScale } from "../../src/console/chart-scale.js";

describe("the charts' value axis", () => {
  it("starts at 0 and ends on a round number at or above the largest value, in steps of 1, 2 or 5", () => {
    expect(niceScale(13, true)).toEqual({ max: 15, ticks: [0, 5, 10, 15] });
    expect(niceScale(100, true)).toEqual({ max: 100, ticks: [0, 50, 100] });
    expect(niceScale(850, false)).toEqual({ max: 1000, ticks: [0, 500, 1000] });
    expect(niceScale(2300, false)).toEqual({ max: 3000, ticks: [0, 1000, 2000, 3000] });
  });

  it("counts in whole steps, and shows 0 to 4 when nothing happened", () => {
    expect(niceScale(0, true)).toEqual({ max: 4, ticks: [0, 1, 2, 3, 4] });
    expect(niceScale(2, true)).toEqual({ max: 4, ticks: [0, 1, 2, 3, 4] });
    expect(niceScale(7, true).ticks.every(Number.isInteger)).toBe(true);
  });

  it("keeps every value on the axis", () => {
    for (const largest of [0.3, 1, 9, 11, 99, 101, 4_999, 123_456]) {
      for (const whole of [true, false]) {
        const { max, ticks } = niceScale(largest, whole);
        expect(max, `${largest}`).toBeGreaterThanOrEqual(largest);
        expect(ticks.at(-1)).toBeCloseTo(max);
        expect(ticks.length, `${largest}`).toBeLessThanOrEqual(6);
      }
    }
  });
});
