import { describe, expect, it } from "vitest";
import { ChannelError } from "../../../src/core/channel-error.js";
import { type BrainStep, recordBrainStep } from "../../../src/core/consumer/record-brain-step.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import type { Metrics } from "../../../src/core/metrics/metrics.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";

/** Metrics that keep each brain call as `brain result`. */
function countedCalls(): { metrics: Metrics; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    metrics: { ...noopMetrics, brainCall: (_channel, brain, ok) => calls.push(`${brain} ${ok ? "ok" : "error"}`) },
  };
}

/** The refusal of a paused brain's limiter: the brain was not asked. */
const pausedRefusal = (brain: string) =>
  new ChannelError("brain_failed", `brain "${brain}" is paused`, {
    status: 503,
    retryable: true,
    brain,
    pausedUntil: Date.now() + 5_000,
  });
const rateLimited = (brain: string) =>
  new ChannelError("brain_failed", `brain "${brain}" answered 429`, {
    status: 503,
    retryable: true,
    brain,
    upstreamStatus: 429,
  });

function step(more: Partial<BrainStep>): BrainStep {
  return {
    channel: "webhook",
    brainName: "local",
    calls: [],
    usage: [],
    ok: false,
    seconds: 0.01,
    fields: () => ({}),
    ...more,
  };
}

describe("recordBrainStep's count of brain calls", () => {
  it("counts a brain that answered or failed, and not a call its paused limiter refused unsent", () => {
    const { metrics, calls } = countedCalls();
    recordBrainStep(step({ ok: true }), metrics, silentLogger);
    recordBrainStep(step({ error: rateLimited("local") }), metrics, silentLogger);
    recordBrainStep(step({ error: pausedRefusal("local") }), metrics, silentLogger);
    expect(calls).toEqual(["local ok", "local error"]);
  });

  it("counts in a fallback chain only the brains that were asked", () => {
    const { metrics, calls } = countedCalls();
    recordBrainStep(
      step({
        ok: true,
        calls: [
          { brain: "local", error: pausedRefusal("local"), seconds: 0 },
          { brain: "hosted", seconds: 0.01 },
        ],
      }),
      metrics,
      silentLogger,
    );
    recordBrainStep(
      step({
        error: pausedRefusal("hosted"),
        calls: [
          { brain: "local", error: rateLimited("local"), seconds: 0.01 },
          { brain: "hosted", error: pausedRefusal("hosted"), seconds: 0 },
        ],
      }),
      metrics,
      silentLogger,
    );
    expect(calls).toEqual(["hosted ok", "local error"]);
  });
});
