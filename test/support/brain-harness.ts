import type { Brain } from "../../src/core/brain/brain.js";
import type { BrainDeps } from "../../src/core/brain/brain-deps.js";
import { createBrains } from "../../src/core/brain/create-brains.js";
import type { Clock } from "../../src/core/clock.js";
import type { Config } from "../../src/core/config/config-schema.js";
import { validateConfig } from "../../src/core/config/validate-config.js";
import { type Consumer, createConsumer } from "../../src/core/consumer/create-consumer.js";
import type { ConversationStore } from "../../src/core/conversation/conversation-store.js";
import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import { createMemoryConversationStore } from "../../src/core/conversation/memory-conversation-store.js";
import { type Job, type JobOutcome, newJob } from "../../src/core/lifecycle/job.js";
import { createMemoryLaneStore } from "../../src/core/lifecycle/memory-lane-store.js";
import { type Logger, silentLogger } from "../../src/core/log/logger.js";
import type { QueuedMessage } from "../../src/core/message/inbound-message.js";
import type { BrainReply } from "../../src/core/message/outbound-reply.js";
import type { Metrics } from "../../src/core/metrics/metrics.js";
import { createFetchPoster } from "../../src/core/outbound/fetch-poster.js";
import { type ReceivedReply, startReceiver } from "../../src/node/receiver/sample-receiver.js";

/** A clock the test moves by hand. */
export interface ManualClock extends Clock {
  advance(ms: number): void;
}

/** A clock starting at `start` (epoch ms) that moves only when told to. */
export function manualClock(start = Date.UTC(2025, 0, 1, 10, 0, 0)): ManualClock {
  let now = start;
  return {
    now: () => now,
    advance: (ms) => {
      now += ms;
    },
  };
}

/** Options of {@link startBrainHarness}. */
export interface BrainHarnessOptions {
  /** The `brains` object of the configuration; the channel routes to `brain`. */
  readonly brains: Record<string, unknown>;
  /** The brain the channel routes to. Default "bot". */
  readonly brain?: string;
  /** Environment variables the brains may read. */
  readonly env?: Readonly<Record<string, string>>;
  readonly clock?: ManualClock;
  readonly ai?: BrainDeps["ai"];
  /** Where the consumer logs; default nowhere. */
  readonly logger?: Logger;
  /** Where the consumer records; default nowhere. */
  readonly metrics?: Metrics;
}

/** What a test sends. */
export interface SendOptions {
  readonly conversationId?: string;
  readonly senderId?: string;
  readonly mediaUrl?: string;
  readonly mediaType?: string;
}

/** The real pipeline from an accepted message to a delivered reply, minus the HTTP intake. */
export interface BrainHarness {
  readonly config: Config;
  readonly brains: ReadonlyMap<string, Brain>;
  readonly store: ConversationStore;
  readonly consumer: Consumer;
  readonly clock: ManualClock;
  /** Replies that reached the outbound receiver, in order. */
  readonly replies: ReceivedReply[];
  /** Builds a queued message as the inbound endpoint would. */
  message(text: string | undefined, options?: SendOptions): QueuedMessage;
  /** Asks the routed brain directly, with no history, bypassing the consumer. */
  ask(text: string | undefined, options?: SendOptions): Promise<readonly BrainReply[]>;
  /** One run of the consumer for a message (a retry is another run of the same message). */
  run(queued: QueuedMessage): Promise<JobOutcome>;
  /**
   * Builds a message and has the consumer run it; resolves when its replies are delivered,
   * and rejects with the job's error (its code, message and whether a retry was planned) otherwise.
   */
  send(text: string | undefined, options?: SendOptions): Promise<QueuedMessage>;
  close(): Promise<void>;
}

/**
 * Wires the real consumer, the real brains (`createBrains`), the in-memory conversation
 * store and a real outbound receiver on a free port, as the Node service does. Only time is
 * injected.
 */
export async function startBrainHarness(options: BrainHarnessOptions): Promise<BrainHarness> {
  const replies: ReceivedReply[] = [];
  const receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
  const clock = options.clock ?? manualClock();
  const result = validateConfig({
    channels: [
      {
        type: "webhook",
        name: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: receiver.url },
      },
    ],
    routes: [{ channel: "webhook", brain: options.brain ?? "bot" }],
    brains: options.brains,
  });
  if (!result.ok) {
    await receiver.close();
    throw new Error(`invalid test config: ${JSON.stringify(result.problems)}`);
  }
  const env = options.env ?? {};
  const brains = createBrains(result.config, {
    fetch,
    env: (name) => env[name],
    clock,
    ...(options.ai === undefined ? {} : { ai: options.ai }),
  });
  const store = createMemoryConversationStore({ now: () => clock.now() });
  let ids = 0;
  const consumer = await createConsumer({
    config: result.config,
    brains,
    poster: createFetchPoster(fetch),
    store,
    clock,
    // No jitter: a retry's delay is then exactly what Retry-After asked for (or 0).
    random: () => 0,
    newId: () => {
      ids += 1;
      return `id-${ids}`;
    },
    logger: options.logger ?? silentLogger,
    env: (name) => env[name],
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
  });
  // Runs store their steps in a memory lane, as the service's lane runner has them do: the
  // brains' history is what those writes kept.
  const lanes = createMemoryLaneStore(store);
  const throughLane = async (job: Job): Promise<JobOutcome> => {
    const ticket = {
      key: conversationKey(job.message.channel, job.message.message.conversationId),
      epoch: lanes.epoch,
    };
    const firstSequence = (await lanes.lastSequence(ticket)) + 1;
    return consumer.run(job, { firstSequence, save: (next, answered) => lanes.save(ticket, next, answered) });
  };
  let messages = 0;
  const message = (text: string | undefined, send: SendOptions = {}): QueuedMessage => {
    messages += 1;
    const senderId = send.senderId ?? "user-1";
    return {
      id: `msg-${messages}`,
      channel: "webhook",
      receivedAt: clock.now(),
      message: {
        senderId,
        conversationId: send.conversationId ?? senderId,
        ...(text === undefined ? {} : { text }),
        ...(send.mediaUrl === undefined ? {} : { mediaUrl: send.mediaUrl }),
        ...(send.mediaType === undefined ? {} : { mediaType: send.mediaType }),
      },
    };
  };
  return {
    config: result.config,
    brains,
    store,
    consumer,
    clock,
    replies,
    message,
    ask(text, send) {
      const brain = brains.get(options.brain ?? "bot");
      if (brain === undefined) throw new Error("no routed brain");
      const queued = message(text, send);
      return brain.reply({ message: queued.message, history: [], messageId: queued.id, channel: queued.channel });
    },
    run: (queued) => throughLane(newJob(queued)),
    async send(text, send) {
      const queued = message(text, send);
      const outcome = await throughLane(newJob(queued));
      clock.advance(1_000);
      if (outcome.kind !== "done") throw new JobFailed(outcome);
      return queued;
    },
    close: () => receiver.close(),
  };
}

/** The `text` of each delivered reply. */
export function replyTexts(replies: readonly ReceivedReply[]): unknown[] {
  return replies.map((reply) => (reply.body as { text?: unknown }).text);
}

/** A run that did not finish: the consumer planned a retry or made a dead letter. */
export class JobFailed extends Error {
  readonly outcome: Exclude<JobOutcome, { kind: "done" }>;
  constructor(outcome: Exclude<JobOutcome, { kind: "done" }>) {
    super(outcome.job.lastError?.message ?? outcome.kind);
    this.name = "JobFailed";
    this.outcome = outcome;
  }
}
