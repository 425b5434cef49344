import type { Metric, Registry } from "prom-client";

/** One label set of a {@link BucketHistogram}: what the hot path holds and calls. */
export interface HistogramChild {
  /** Counts `value` (seconds) in the first bucket whose upper bound is at least `value`. */
  observe(value: number): void;
}

/** A Prometheus histogram whose observations are plain additions; prom-client renders it. */
export interface BucketHistogram {
  /**
   * The child of one label set, `labelValues` in the order of `labelNames`. Made on first use
   * and kept: callers look it up once per label set and hold it, so `observe` never sees labels.
   */
  child(...labelValues: string[]): HistogramChild;
}

/** The series of a {@link createBucketHistogram}, fixed for the registry's lifetime. */
export interface BucketHistogramOptions {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly string[];
  /** Upper bounds, ascending; `+Inf` is implied, as in prom-client. */
  readonly buckets: readonly number[];
  readonly registry: Registry;
}

/** One exposition sample, in the shape prom-client's registry renders from `get()`. */
interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName: string;
}

/**
 * Counts per bucket (not cumulative), their sum and count. A class so that every child has
 * one hidden shape, which keeps `observe` monomorphic on the hot path.
 */
class Child implements HistogramChild {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly bounds: Float64Array,
    readonly labels: Readonly<Record<string, string>>,
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    // prom-client throws on these; a metric must never fail the message it is measuring.
    if (!Number.isFinite(value)) return;
    const { bounds } = this;
    for (let index = 0; index < bounds.length; index += 1) {
      if (value <= (bounds[index] ?? Number.POSITIVE_INFINITY)) {
        this.counts[index] = (this.counts[index] ?? 0) + 1;
        break;
      }
    }
    this.sum += value;
    this.count += 1;
  }

  reset(): void {
    this.counts.fill(0);
    this.sum = 0;
    this.count = 0;
  }
}

/**
 * Builds a histogram with prom-client's series (`_bucket` with `le` first, `+Inf`, `_sum`,
 * `_count`) and registers it in `registry`, which reads it at scrape time. prom-client's own
 * `Histogram.observe` validates and hashes the label object and looks its bucket up by a
 * stringified bound on every call; here the hot path is a scan of a Float64Array and three
 * additions. As with prom-client, a label set shows in the exposition once it has observed.
 */
export function createBucketHistogram(options: BucketHistogramOptions): BucketHistogram {
  const { name, help, labelNames } = options;
  const bounds = Float64Array.from(options.buckets);
  for (let index = 1; index < bounds.length; index += 1) {
    if ((bounds[index] ?? 0) <= (bounds[index - 1] ?? 0)) throw new Error(`${name}: buckets must ascend`);
  }
  const children = new Map<string, Child>();

  const samples = (): Sample[] => {
    const out: Sample[] = [];
    for (const child of children.values()) {
      if (child.count === 0) continue;
      let cumulative = 0;
      bounds.forEach((bound, index) => {
        cumulative += child.counts[index] ?? 0;
        out.push({ labels: { le: bound, ...child.labels }, value: cumulative, metricName: `${name}_bucket` });
      });
      out.push(
        { labels: { le: "+Inf", ...child.labels }, value: child.count, metricName: `${name}_bucket` },
        { labels: child.labels, value: child.sum, metricName: `${name}_sum` },
        { labels: child.labels, value: child.count, metricName: `${name}_count` },
      );
    }
    return out;
  };

  // The registry needs only these members of a metric (it calls `get()` when there is no
  // `getForPromString`, and `reset()` from `resetMetrics`); prom-client's types name only its
  // own classes, hence the cast.
  const metric = {
    name,
    help,
    type: "histogram",
    aggregator: "sum",
    get: async () => ({ name, help, type: "histogram", aggregator: "sum", values: samples() }),
    reset: () => {
      for (const child of children.values()) child.reset();
    },
  };
  options.registry.registerMetric(metric as unknown as Metric);

  return {
    child(...labelValues) {
      if (labelValues.length !== labelNames.length) {
        throw new Error(`${name}: ${labelValues.length} label values for ${labelNames.length} label names`);
      }
      const key = JSON.stringify(labelValues);
      let found = children.get(key);
      if (found === undefined) {
        const labels: Record<string, string> = {};
        labelNames.forEach((labelName, index) => {
          labels[labelName] = labelValues[index] ?? "";
        });
        found = new Child(bounds, labels);
        children.set(key, found);
      }
      return found;
    },
  };
}
