/**
 * What the receiver circuit's tests on the Node job queue share: real waits that fake timers do
 * not touch, the queued message they enqueue, and the job queue over the real consumer.
 */
import { systemClock } from "../../../src/core/clock.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import type { Poster } from "../../../src/core/outbound/poster.js";
import { circuitPolicyOf } from "../../../src/core/receiver/receiver-circuit.js";
import { createNodeConsumer } from "../../../src/node/consumer/node-consumer.js";
import { createUndiciPoster } from "../../../src/node/consumer/undici-poster.js";
import { createJobQueue, type JobQueue } from "../../../src/node/queue/job-queue.js";
import { createMemoryBackend } from "../../../src/node/state/memory-backend.js";
import { configDocument } from "../../support/configs.js";
import type { JsonTestServer } from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";

// Captured when this module loads, before any test fakes timers: real I/O still needs real waits.
const realSetTimeout = globalThis.setTimeout;

/** Waits `ms` of real time, even while a test fakes the timers. */
export const realWait = (ms: number) => new Promise<void>((resolve) => realSetTimeout(resolve, ms));

/** A circuit that goes down at the first unanswered POST and probes every 50 ms: for runs written by hand. */
export const HAND_POLICY = {
  failuresToOpen: 1,
  initialDelayMs: 50,
  maxDelayMs: 50,
  probeTimeoutMs: 5_000,
  target: "http://receiver.example",
};

/** One reply, for jobs whose runs are written by hand. */
export const HAND_REPLY = { id: "r", sequence: 1, body: "{}" };

/** A message of `conversationId` on the `webhook` channel, received now, whose text is its id. */
export const message = (id: string, conversationId: string): QueuedMessage => ({
  id,
  channel: "webhook",
  receivedAt: Date.now(),
  message: { senderId: conversationId, conversationId, text: id },
});

/** A job queue of the `webhook` channel, with what it handed on and logged. */
export interface Harness {
  readonly queue: JobQueue;
  readonly deadLetters: DeadLetter[];
  /** Each change of the receiver's state the metrics were told of: `false` down, `true` up. */
  readonly receiverStates: boolean[];
  readonly lines: Record<string, unknown>[];
  /** The consumer's POSTs as it makes them (not as the receiver happens to read them). */
  readonly posts: PostWatch;
  close(): Promise<void>;
}

/**
 * Counts the POSTs the consumer has open, on its side of the socket: a POST started before
 * `mark()` may reach a loaded receiver long after, so only the consumer can tell which came first.
 */
export interface PostWatch {
  /** From now on, `mostSinceMark` counts only the POSTs started after this call. */
  mark(): void;
  /** The most POSTs started since the last `mark()` that were open at once. */
  readonly mostSinceMark: number;
  /** The POSTs started since the last `mark()`. */
  readonly startedSinceMark: number;
}

function watchedPoster(inner: Poster & { close(): Promise<void> }): {
  poster: Poster & { close(): Promise<void> };
  watch: PostWatch;
} {
  let epoch = 0;
  let openSinceMark = 0;
  let most = 0;
  let started = 0;
  const poster = {
    post: async (...args: Parameters<Poster["post"]>) => {
      const startedIn = epoch;
      if (startedIn > 0) {
        started += 1;
        openSinceMark += 1;
        most = Math.max(most, openSinceMark);
      }
      try {
        return await inner.post(...args);
      } finally {
        if (startedIn > 0 && startedIn === epoch) openSinceMark -= 1;
      }
    },
    close: () => inner.close(),
  };
  const watch: PostWatch = {
    mark: () => {
      epoch += 1;
      openSinceMark = 0;
      most = 0;
      started = 0;
    },
    get mostSinceMark() {
      return most;
    },
    get startedSinceMark() {
      return started;
    },
  };
  return { poster, watch };
}

/** The Node job queue over the real consumer (echo brain, undici poster) posting to `receiver`. */
export async function harness(receiver: JsonTestServer, delivery: Record<string, unknown>): Promise<Harness> {
  const validated = validateConfig(configDocument({ outbound_url: `${receiver.origin}/replies`, delivery }));
  if (!validated.ok) throw new Error(JSON.stringify(validated.problems));
  const { config } = validated;
  const { logger, lines } = createLogSink("info");
  const receiverStates: boolean[] = [];
  const metrics = {
    ...(await import("../../../src/core/metrics/noop-metrics.js")).noopMetrics,
    receiverState: (_channel: string, up: boolean) => receiverStates.push(up),
  };
  const { poster, watch } = watchedPoster(createUndiciPoster());
  const built = await createNodeConsumer({
    poster,
    config,
    logger,
    env: () => undefined,
    state: createMemoryBackend(systemClock),
    random: () => 0.5,
    metrics,
  });
  const deadLetters: DeadLetter[] = [];
  const channel = config.channels[0];
  if (channel === undefined) throw new Error("no channel");
  const queue = createJobQueue({
    capacity: 1_000,
    run: (job, onProgress, admission) => built.consumer.run(job, onProgress, admission),
    receiver: { channel: "webhook", policy: () => circuitPolicyOf(channel.webhook) },
    onDeadLetter: (letter) => {
      deadLetters.push(letter);
    },
    logger,
    metrics,
  });
  return {
    queue,
    deadLetters,
    receiverStates,
    lines,
    posts: watch,
    close: async () => {
      await queue.drain(0);
      await built.close();
    },
  };
}
