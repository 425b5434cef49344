// Latency percentiles with sub-millisecond resolution. autocannon's own histogram stores
// whole milliseconds, which would print 0 or 1 ms for every loopback p50; these keep 10 µs.

const BUCKET_MS = 0.01;
const BUCKETS = 1_000_000; // 10 µs × 1e6 = 10 s; slower samples land in the last bucket.

/** A fixed-size histogram: O(1) per sample, 4 MB whatever the sample count. */
export function createHistogram() {
  return { counts: new Uint32Array(BUCKETS), total: 0, max: 0 };
}

export function record(histogram, ms) {
  const bucket = Math.min(BUCKETS - 1, Math.max(0, Math.floor(ms / BUCKET_MS)));
  histogram.counts[bucket] += 1;
  histogram.total += 1;
  if (ms > histogram.max) histogram.max = ms;
}

/** The p-th percentile (0..100) in ms, the upper edge of its bucket; null when empty. */
export function histogramPercentile(histogram, p) {
  if (histogram.total === 0) return null;
  const rank = Math.ceil((p / 100) * histogram.total);
  let seen = 0;
  for (let bucket = 0; bucket < BUCKETS; bucket += 1) {
    seen += histogram.counts[bucket];
    if (seen >= rank) return Math.min(histogram.max, (bucket + 1) * BUCKET_MS);
  }
  return histogram.max;
}

/** The p-th percentile (0..100) of an ascending array (nearest rank); null when empty. */
export function sortedPercentile(sorted, p) {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[rank - 1];
}

/** Milliseconds with 2 decimals, or "n/a". */
export const ms = (value) => (value === null || value === undefined ? "n/a" : value.toFixed(2));
