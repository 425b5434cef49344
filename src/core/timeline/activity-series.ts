import type { TimelineEvent } from "./timeline-event.js";

/** One minute, the width of every activity bucket. */
export const MINUTE_MS = 60_000;

/** How far back the activity reaches: the console's charts show this much. */
export const ACTIVITY_WINDOW_MS = 60 * MINUTE_MS;

/** Each latency bucket is this many times as wide as the one before. */
const RATIO = 1.25;
const LOG_RATIO = Math.log(RATIO);
/**
 * The last bucket takes everything above thirty days: a reply held through a long receiver
 * outage (up to `max_age_ms`), or a dead letter replayed days later, is delivered that long after
 * its acceptance, and its percentile must say so.
 */
const LAST_BUCKET = Math.ceil(Math.log(30 * 24 * 3_600_000) / LOG_RATIO);
const LATENCY = "latency:";
/** Every latency series' name, made once: a delivery's count must not build a string. */
const LATENCY_SERIES: readonly string[] = Array.from({ length: LAST_BUCKET + 1 }, (_, bucket) => `${LATENCY}${bucket}`);

/** The start of the minute `at` falls in. */
export function minuteOf(at: number): number {
  return Math.floor(at / MINUTE_MS) * MINUTE_MS;
}

/**
 * Counts `event` in the series it belongs to, if any: `accepted`, `delivered`, `retrying`,
 * `dead_lettered`, and for a delivery also the latency bucket of its end-to-end time (accepted to
 * delivered). Buckets grow geometrically, so a percentile read from them is within a bucket's width.
 */
export function countEvent(event: TimelineEvent, acceptedAt: number, add: (series: string) => void): void {
  switch (event.type) {
    case "accepted":
      add("accepted");
      return;
    case "retry":
      add("retrying");
      return;
    case "dead_letter":
      add("dead_lettered");
      return;
    case "delivered":
      add("delivered");
      {
        // A time that is not a number (a clock gone wrong) counts as delivered, in no bucket.
        const series = LATENCY_SERIES[latencyBucket(event.at - acceptedAt)];
        if (series !== undefined) add(series);
      }
      return;
    default:
      return;
  }
}

function latencyBucket(ms: number): number {
  if (ms <= 1) return 0;
  return Math.min(LAST_BUCKET, Math.ceil(Math.log(ms) / LOG_RATIO));
}

/** The latency bucket a series counts, or undefined for another series. */
export function latencyBucketOf(series: string): number | undefined {
  if (!series.startsWith(LATENCY)) return undefined;
  const bucket = Number(series.slice(LATENCY.length));
  return Number.isInteger(bucket) && bucket >= 0 ? bucket : undefined;
}

/**
 * The `p`-quantile (0 to 1) of the latencies counted in `buckets` (bucket → count), in ms, as
 * the geometric middle of the bucket it falls in; null when nothing was counted.
 */
export function quantileOf(buckets: ReadonlyMap<number, number>, p: number): number | null {
  let total = 0;
  for (const count of buckets.values()) total += count;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const bucket of [...buckets.keys()].sort((a, b) => a - b)) {
    seen += buckets.get(bucket) ?? 0;
    if (seen >= rank) {
      if (bucket === 0) return 1;
      return Math.round(RATIO ** (bucket - 0.5));
    }
  }
  return null;
}
