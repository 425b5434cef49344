import type { StatusReport } from "../../../../src/core/admin/status-report.js";
import { createApp } from "../../../../src/core/app/create-app.js";
import type { InboundQueue } from "../../../../src/core/app/inbound-queue.js";
import { bufferFullError, commitsBehindError, stateDownError } from "../../../../src/core/app/refusals.js";
import { createMemoryAuthFailureLimiter } from "../../../../src/core/auth-limit/memory-auth-failure-limiter.js";
import { validateConfig } from "../../../../src/core/config/validate-config.js";
import { createAdminDeadLetters } from "../../../../src/core/dead-letters/create-admin-dead-letters.js";
import { createMemoryDeadLetterStore } from "../../../../src/core/dead-letters/memory-dead-letter-store.js";
import { createMemoryIdempotencyStore } from "../../../../src/core/idempotency/memory-idempotency-store.js";
import { MemoryTimelineStore } from "../../../../src/core/timeline/memory-timeline-store.js";
import { createTimelineAdmin } from "../../../../src/core/timeline/timeline-admin.js";
import { createTimelineRecorder } from "../../../../src/core/timeline/timeline-recorder.js";
import { createPrometheusMetrics } from "../../../../src/node/metrics/prometheus-metrics.js";
import type { World } from "../../../shared/inbound-fuzz/fuzz-case.js";
import { fuzzConfig, fuzzLetters, T0 } from "../../../shared/inbound-fuzz/fuzz-fixture.js";
import {
  ADMIN_SECRET,
  HOOKS_SECRET,
  WEBHOOK_PREVIOUS_SECRET,
  WEBHOOK_SECRET,
} from "../../../shared/inbound-fuzz/fuzz-secrets.js";
import { MANY } from "../../../shared/store-contracts/dead-letter-contract-letters.js";
import { createLogSink } from "../../../support/log-sink.js";

// The app under test: the real core over in-memory stores, as the tests of test/core/app and
// test/core/admin build it, with the channels and dead letters of fuzz-fixture.ts (which the
// Workers fuzz, test/workers/inbound-fuzz, builds its Worker from too).

const REPORT: StatusReport = {
  runtime: "node",
  generated_at: "2026-11-27T04:00:00.000Z",
  counting_since: "2026-11-27T03:00:00.000Z",
  channels: [],
  brains: [],
  dead_letters: 0,
  not_available: [],
};

/**
 * The app with two webhook channels, the admin API and 30 dead letters, whose queue, shutdown
 * and dead-letter restore follow the returned `world`, and whose clock moves only by `advance`.
 */
export function fuzzApp() {
  const result = validateConfig(fuzzConfig());
  if (!result.ok) throw new Error(`the fuzz configuration is invalid: ${JSON.stringify(result.problems)}`);
  const world: World = { shuttingDown: false, queueMode: "sync", restoreOk: true };
  let now = T0;
  const clock = { now: () => now };
  const sink = createLogSink();
  const acceptedIds: string[] = [];
  // While held, an "async" enqueue answers only when released: a burst's first request is still
  // storing its message when the others with its Idempotency-Key arrive.
  let held: Promise<void> | undefined;
  let waiting = 0;
  const holdEnqueues = (): (() => void) => {
    let release = (): void => undefined;
    held = new Promise<void>((resolve) => {
      release = resolve;
    });
    return () => {
      held = undefined;
      release();
    };
  };
  const queue: InboundQueue = {
    enqueue(message) {
      switch (world.queueMode) {
        case "throw":
          throw new Error("disk I/O error");
        case "reject":
          return Promise.reject(new Error("connection reset by the store"));
        case "reject-full":
          return Promise.reject(bufferFullError());
        case "async":
          acceptedIds.push(message.id);
          if (held === undefined) return Promise.resolve();
          waiting += 1;
          return held.finally(() => {
            waiting -= 1;
          });
        default:
          acceptedIds.push(message.id);
          return undefined;
      }
    },
    hasRoom: () => world.queueMode !== "full",
    refusal: () => {
      if (world.queueMode === "state-down") return stateDownError();
      if (world.queueMode === "commits-behind") return commitsBehindError();
      return undefined;
    },
  };
  const timelineStore = new MemoryTimelineStore();
  const recorder = createTimelineRecorder({
    store: timelineStore,
    retention: { windowMs: 3_600_000, maxMessages: 2_000, keepText: true },
    clock,
    logger: sink.logger,
    // Written by hand (flush) between requests: no timer outlives the test.
    schedule: () => undefined,
  });
  const letters = createMemoryDeadLetterStore(() => world.restoreOk);
  const letterIds: string[] = [];
  for (const letter of fuzzLetters()) {
    letterIds.push(letter.job.message.id);
    letters.keep(letter, MANY);
  }
  const metrics = createPrometheusMetrics({
    channels: ["webhook", "hooks"],
    queues: () => new Map(),
    now: clock.now,
  });
  let next = 0;
  const app = createApp({
    channels: result.config.channels,
    secretsFor: (channel) => (channel === "hooks" ? [HOOKS_SECRET] : [WEBHOOK_SECRET, WEBHOOK_PREVIOUS_SECRET]),
    queueFor: () => queue,
    clock,
    newId: () => `m-${++next}`,
    logger: sink.logger,
    idempotency: createMemoryIdempotencyStore(),
    isShuttingDown: () => world.shuttingDown,
    authFailures: createMemoryAuthFailureLimiter(clock),
    peerAddress: (request) => request.headers.get("x-fuzz-peer"),
    metrics,
    metricsEndpoint: () => metrics.respond(),
    admin: {
      secret: () => ADMIN_SECRET,
      deadLetters: createAdminDeadLetters(letters, undefined, ["webhook", "hooks"]),
      status: { report: () => Promise.resolve(REPORT) },
      timeline: createTimelineAdmin(timelineStore, clock),
    },
    timeline: recorder,
  });
  return {
    app,
    world,
    acceptedIds,
    letterIds,
    lines: sink.lines,
    recorder,
    holdEnqueues,
    /** Enqueues waiting for the release of {@link holdEnqueues}. */
    heldEnqueues: () => waiting,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

/** The app under test with its handles, as `fuzzApp` returns it. */
export type Fuzz = ReturnType<typeof fuzzApp>;
