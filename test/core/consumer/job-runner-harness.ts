/**
 * The job runner's test bench, shared by the job-runner*.test.ts files: the real consumer
 * (routes from a validated config, answer steps, job runner) with time, ids, the brain and the
 * outbound port injected, so each file can script what the brain and the receiver do.
 */
import { expect } from "vitest";
import type { Brain } from "../../../src/core/brain/brain.js";
import { createEchoBrain } from "../../../src/core/brain/echo-brain.js";
import type { Clock } from "../../../src/core/clock.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type Consumer, createConsumer } from "../../../src/core/consumer/create-consumer.js";
import { type ConversationStore, conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { createMemoryConversationStore } from "../../../src/core/conversation/memory-conversation-store.js";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import { createMemoryLaneStore } from "../../../src/core/lifecycle/memory-lane-store.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import type { BrainReply } from "../../../src/core/message/outbound-reply.js";
import type { Poster, PostResult } from "../../../src/core/outbound/poster.js";
import { type CircuitOutcome, ruleOn } from "../../../src/core/receiver/pass-circuit.js";
import type { Admission } from "../../../src/core/receiver/receiver-circuit.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";

/** When every test starts: the clock's start and the messages' `receivedAt`. */
export const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);
/** The channel's outbound_url, which every reply is posted to. */
export const OUTBOUND_URL = "http://127.0.0.1:8091/replies";

/** A clock the test sets by hand. */
export interface FakeClock extends Clock {
  set(ms: number): void;
  advance(ms: number): void;
}

function fakeClock(start = T0): FakeClock {
  let now = start;
  return {
    now: () => now,
    set: (ms) => {
      now = ms;
    },
    advance: (ms) => {
      now += ms;
    },
  };
}

/**
 * The echo brain, asked once per "|"-separated part of the text so one message gets several
 * replies in order, and counting how often it is asked. It keeps history so the real
 * conversation store is written.
 */
export interface CountingBrain extends Brain {
  readonly calls: number;
}

/** A {@link CountingBrain}; when `fail` returns something, the brain throws it instead of answering. */
export function countingEcho(fail?: () => unknown): CountingBrain {
  const echo = createEchoBrain();
  let calls = 0;
  return {
    name: "echo",
    historyLimit: 10,
    get calls() {
      return calls;
    },
    async reply(request) {
      calls += 1;
      const problem = fail?.();
      if (problem !== undefined) throw problem;
      const parts = (request.message.text ?? "").split("|");
      const replies: BrainReply[] = [];
      for (const part of parts)
        replies.push(...(await echo.reply({ ...request, message: { ...request.message, text: part } })));
      return replies;
    },
  };
}

/** One POST the poster was asked for. */
export interface Posted {
  readonly url: string;
  readonly body: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
}

/** What the receiver answers a POST: a status, or a status with its Retry-After. */
export type Answer = number | PostResult;

/** The outbound port answering scripted statuses, the last one repeated; `during` runs inside each POST. */
function scriptedPoster(answers: Answer[], during?: () => void): Poster & { readonly posted: Posted[] } {
  const posted: Posted[] = [];
  let index = 0;
  return {
    posted,
    post(url, body, headers) {
      during?.();
      posted.push({ url, body: JSON.parse(body) as Record<string, unknown>, headers });
      const answer = answers[Math.min(index, answers.length - 1)] ?? 200;
      index += 1;
      return Promise.resolve(typeof answer === "number" ? { status: answer, retryAfter: null } : answer);
    },
  };
}

/** What a test hears of each step a run stores; one that throws fails the step's write. */
export type SaveHook = (job: Job) => void | Promise<void>;

/** The consumer {@link setup} built, with the parts a test scripts or inspects. */
export interface Setup {
  readonly consumer: Consumer;
  /** Runs a job as the lane runner does, storing its steps in a memory lane; admitted to post as `admission`. */
  readonly run: (job: Job, onSave?: SaveHook, admission?: Admission) => Promise<JobOutcome>;
  readonly brain: CountingBrain;
  readonly poster: ReturnType<typeof scriptedPoster>;
  readonly store: ConversationStore;
  readonly clock: FakeClock;
  readonly lines: Record<string, unknown>[];
}

/** Options of {@link setup}. */
export interface SetupOptions {
  readonly answers?: Answer[];
  readonly delivery?: Record<string, unknown>;
  readonly brain?: CountingBrain;
  /** Runs inside each POST, e.g. to move the clock while the request is in flight. */
  readonly duringPost?: (clock: FakeClock) => void;
}

/** The real consumer (routes from a validated config, answer steps, job runner) with injected time. */
export async function setup(options: SetupOptions = {}): Promise<Setup> {
  const result = validateConfig(configDocument({ outbound_url: OUTBOUND_URL, delivery: options.delivery ?? {} }));
  if (!result.ok) throw new Error(`invalid test config: ${JSON.stringify(result.problems)}`);
  const clock = fakeClock();
  const brain = options.brain ?? countingEcho();
  const { duringPost } = options;
  const poster = scriptedPoster(
    options.answers ?? [200],
    duringPost === undefined ? undefined : () => duringPost(clock),
  );
  const store = createMemoryConversationStore({ now: () => clock.now() });
  const { logger, lines } = createLogSink();
  let ids = 0;
  const consumer = await createConsumer({
    config: result.config,
    brains: new Map([["echo", brain]]),
    poster,
    store,
    clock,
    random: () => 0.5,
    newId: () => {
      ids += 1;
      return `reply-${ids}`;
    },
    logger,
    env: () => undefined,
  });
  // The lane the runs store through, as the lane runner gives its hooks: numbers from its last.
  const lanes = createMemoryLaneStore(store);
  const run = async (job: Job, onSave?: SaveHook, admission?: Admission): Promise<JobOutcome> => {
    const ticket = {
      key: conversationKey(job.message.channel, job.message.message.conversationId),
      epoch: lanes.epoch,
    };
    const firstSequence = (await lanes.lastSequence(ticket)) + 1;
    return consumer.run(
      job,
      {
        firstSequence,
        save: async (next, answered) => {
          await onSave?.(next);
          await lanes.save(ticket, next, answered);
        },
      },
      admission,
    );
  };
  return { consumer, run, brain, poster, store, clock, lines };
}

/** A message of conversation "conv-1" from "user-1", received at {@link T0}. */
export function queued(text: string, channel = "webhook"): QueuedMessage {
  return {
    id: "msg-1",
    channel,
    receivedAt: T0,
    message: { senderId: "user-1", conversationId: "conv-1", text },
  };
}

/** The text of each posted reply, in order. */
export const textsOf = (posted: readonly Posted[]) => posted.map((post) => post.body.text);

/**
 * The outcome as a receiver that is up rules on it (`ruleOn`): an unanswered POST comes to its
 * verdict, as it did before the receiver circuit existed.
 */
export function expectKind<K extends CircuitOutcome["kind"]>(
  raw: JobOutcome,
  kind: K,
): Extract<CircuitOutcome, { kind: K }> {
  const outcome = ruleOn(raw, false);
  expect(outcome.kind).toBe(kind);
  if (outcome.kind !== kind) throw new Error(`expected ${kind}, got ${outcome.kind}`);
  return outcome as Extract<CircuitOutcome, { kind: K }>;
}
