import { Histogram, Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import { createBucketHistogram } from "../../../src/node/metrics/bucket-histogram.js";
import { sample } from "./scrape.js";

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

function build(labelNames: readonly string[] = ["channel"], buckets: readonly number[] = [0.1, 1, 10]) {
  const registry = new Registry();
  const histogram = createBucketHistogram({ name: "test_seconds", help: "A test.", labelNames, buckets, registry });
  return { registry, histogram };
}

describe("a bucket histogram", () => {
  it("counts a value exactly on a boundary in that boundary's bucket", async () => {
    const { registry, histogram } = build();
    histogram.child("a").observe(0.1);
    histogram.child("a").observe(1);
    const text = await registry.metrics();
    expect(sample(text, "test_seconds_bucket", { le: "0.1", channel: "a" })).toBe(1);
    expect(sample(text, "test_seconds_bucket", { le: "1", channel: "a" })).toBe(2);
    expect(sample(text, "test_seconds_bucket", { le: "10", channel: "a" })).toBe(2);
  });

  it("counts a value above the last boundary only in +Inf, _count and _sum", async () => {
    const { registry, histogram } = build();
    const child = histogram.child("a");
    child.observe(0.05);
    child.observe(11);
    const text = await registry.metrics();
    expect(sample(text, "test_seconds_bucket", { le: "10", channel: "a" })).toBe(1);
    expect(sample(text, "test_seconds_bucket", { le: "+Inf", channel: "a" })).toBe(2);
    expect(sample(text, "test_seconds_count", { channel: "a" })).toBe(2);
    expect(sample(text, "test_seconds_sum", { channel: "a" })).toBeCloseTo(11.05);
  });

  it("renders the same text as prom-client's Histogram for the same observations", async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const mine = createBucketHistogram({
      name: "same_seconds",
      help: "Same help.",
      labelNames: ["channel", "brain"],
      buckets: BUCKETS,
      registry: ours,
    });
    const reference = new Histogram({
      name: "same_seconds",
      help: "Same help.",
      labelNames: ["channel", "brain"],
      buckets: BUCKETS,
      registers: [theirs],
    });
    const values = [0, 0.005, 0.0051, 0.3, 1, 2.5, 59.9, 60, 61, 3600, -0.001];
    for (const [index, value] of values.entries()) {
      const brain = index % 2 === 0 ? "echo" : 'open"ai\\x';
      mine.child("a", brain).observe(value);
      reference.labels("a", brain).observe(value);
    }
    mine.child("b", "echo").observe(0.02);
    reference.labels("b", "echo").observe(0.02);
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });

  it("shows a label set once it has observed, and keeps one child per label set", async () => {
    const { registry, histogram } = build();
    const child = histogram.child("a");
    expect(await registry.metrics()).not.toContain("test_seconds_count");
    expect(histogram.child("a")).toBe(child);
    child.observe(0.2);
    expect(sample(await registry.metrics(), "test_seconds_count", { channel: "a" })).toBe(1);
  });

  it("ignores a value that is not finite instead of throwing on the measured path", async () => {
    const { registry, histogram } = build();
    const child = histogram.child("a");
    child.observe(0.2);
    child.observe(Number.NaN);
    child.observe(Number.POSITIVE_INFINITY);
    const text = await registry.metrics();
    expect(sample(text, "test_seconds_count", { channel: "a" })).toBe(1);
    expect(sample(text, "test_seconds_sum", { channel: "a" })).toBe(0.2);
  });

  it("starts over when the registry resets its metrics", async () => {
    const { registry, histogram } = build();
    histogram.child("a").observe(0.2);
    registry.resetMetrics();
    expect(await registry.metrics()).not.toContain("test_seconds_count");
    histogram.child("a").observe(5);
    const text = await registry.metrics();
    expect(sample(text, "test_seconds_bucket", { le: "1", channel: "a" })).toBe(0);
    expect(sample(text, "test_seconds_count", { channel: "a" })).toBe(1);
  });

  it("is a histogram in the registry's JSON, with every label on each sample", async () => {
    const { registry, histogram } = build();
    histogram.child("a").observe(0.2);
    const [metric] = await registry.getMetricsAsJSON();
    expect(metric?.name).toBe("test_seconds");
    expect(String(metric?.type)).toBe("histogram");
    expect(metric?.values).toContainEqual({
      labels: { le: 1, channel: "a" },
      value: 1,
      metricName: "test_seconds_bucket",
    });
  });

  it("refuses a wrong number of label values and buckets that do not ascend", () => {
    const { histogram } = build(["channel", "brain"]);
    expect(() => histogram.child("a")).toThrow(/1 label values for 2 label names/);
    expect(() => build(["channel"], [1, 0.5])).toThrow(/ascend/);
  });
});
