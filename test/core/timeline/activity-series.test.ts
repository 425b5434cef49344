/**
 * The end-to-end latency buckets the console's percentiles are read from: within a bucket's
 * width of the true time, from a millisecond to days (a reply held through a long outage, a dead
 * letter replayed later).
 */
import { describe, expect, it } from "vitest";
import { countEvent, latencyBucketOf, quantileOf } from "../../../src/core/timeline/activity-series.js";

/** The percentile `p` of one delivery `ms` after its acceptance, as the activity reads it. */
function percentileOfOne(ms: number, p: number): number | null {
  const buckets = new Map<number, number>();
  countEvent(
    { type: "delivered", at: 1_000 + ms, status: 200 } as Parameters<typeof countEvent>[0],
    1_000,
    (series) => {
      const bucket = latencyBucketOf(series);
      if (bucket !== undefined) buckets.set(bucket, (buckets.get(bucket) ?? 0) + 1);
    },
  );
  return quantileOf(buckets, p);
}

describe("end-to-end latency buckets", () => {
  it.each([5, 250, 60_000, 3_600_000, 5 * 3_600_000, 3 * 24 * 3_600_000])(
    "read a delivery %i ms after its acceptance within a bucket's width",
    (ms) => {
      const read = percentileOfOne(ms, 0.5) ?? 0;
      expect(read).toBeGreaterThan(ms / 1.25);
      expect(read).toBeLessThan(ms * 1.25);
    },
  );
});
