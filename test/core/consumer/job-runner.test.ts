import { describe, expect, it } from "vitest";
import type { Brain } from "../../../src/core/brain/brain.js";
import { createEchoBrain } from "../../../src/core/brain/echo-brain.js";
import type { Clock } from "../../../src/core/clock.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type Consumer, createConsumer } from "../../../src/core/consumer/create-consumer.js";
import { type ConversationStore, conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { createMemoryConversationStore } from "../../../src/core/conversation/memory-conversation-store.js";
import { replayableJob } from "../../../src/core/dead-letters/dead-letter.js";
import { type Job, type JobOutcome, newJob } from "../../../src/core/lifecycle/job.js";
import { laneFencedError } from "../../../src/core/lifecycle/lane-store.js";
import { createMemoryLaneStore } from "../../../src/core/lifecycle/memory-lane-store.js";
import type { QueuedMessage } from "../../../src/core/message/inbound-message.js";
import type { BrainReply } from "../../../src/core/message/outbound-reply.js";
import type { Poster, PostResult } from "../../../src/core/outbound/poster.js";
import { type CircuitOutcome, ruleOn } from "../../../src/core/receiver/pass-circuit.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";

const T0 = Date.UTC(2025, 0, 1, 10, 0, 0);
const OUTBOUND_URL = "http://127.0.0.1:8091/replies";

/** A clock the test sets by hand. */
interface FakeClock extends Clock {
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
interface CountingBrain extends Brain {
  readonly calls: number;
}

function countingEcho(fail?: () => unknown): CountingBrain {
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
interface Posted {
  readonly url: string;
  readonly body: Record<string, unknown>;
  readonly headers: Readonly<Record<string, string>>;
}

type Answer = number | PostResult;

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

interface Setup {
  readonly consumer: Consumer;
  /** Runs a job as the lane runner does, storing its steps in a memory lane. */
  readonly run: (job: Job, onSave?: SaveHook) => Promise<JobOutcome>;
  readonly brain: CountingBrain;
  readonly poster: ReturnType<typeof scriptedPoster>;
  readonly store: ConversationStore;
  readonly clock: FakeClock;
  readonly lines: Record<string, unknown>[];
}

interface SetupOptions {
  readonly answers?: Answer[];
  readonly delivery?: Record<string, unknown>;
  readonly brain?: CountingBrain;
  /** Runs inside each POST, e.g. to move the clock while the request is in flight. */
  readonly duringPost?: (clock: FakeClock) => void;
}

/** The real consumer (routes from a validated config, answer steps, job runner) with injected time. */
async function setup(options: SetupOptions = {}): Promise<Setup> {
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
  const run = async (job: Job, onSave?: SaveHook): Promise<JobOutcome> => {
    const ticket = {
      key: conversationKey(job.message.channel, job.message.message.conversationId),
      epoch: lanes.epoch,
    };
    const firstSequence = (await lanes.lastSequence(ticket)) + 1;
    return consumer.run(job, {
      firstSequence,
      save: async (next, answered) => {
        await onSave?.(next);
        await lanes.save(ticket, next, answered);
      },
    });
  };
  return { consumer, run, brain, poster, store, clock, lines };
}

/** What a test hears of each step a run stores; one that throws fails the step's write. */
type SaveHook = (job: Job) => void | Promise<void>;

function queued(text: string, channel = "webhook"): QueuedMessage {
  return {
    id: "msg-1",
    channel,
    receivedAt: T0,
    message: { senderId: "user-1", conversationId: "conv-1", text },
  };
}

const textsOf = (posted: readonly Posted[]) => posted.map((post) => post.body.text);

/**
 * The outcome as a receiver that is up rules on it (`ruleOn`): an unanswered POST comes to its
 * verdict, as it did before the receiver circuit existed.
 */
function expectKind<K extends CircuitOutcome["kind"]>(raw: JobOutcome, kind: K): Extract<CircuitOutcome, { kind: K }> {
  const outcome = ruleOn(raw, false);
  expect(outcome.kind).toBe(kind);
  if (outcome.kind !== kind) throw new Error(`expected ${kind}, got ${outcome.kind}`);
  return outcome as Extract<CircuitOutcome, { kind: K }>;
}

describe("job runner", () => {
  it("gives a replayed job's undelivered replies the conversation's next sequence numbers, keeping their ids and the delivered one", async () => {
    const { run, brain, poster } = await setup({ answers: [200, 400, 200] });
    const dead = expectKind(await run(newJob(queued("one|two|three"))), "dead");
    // Another message of the conversation was answered meanwhile: it took 4.
    const other = expectKind(await run(newJob({ ...queued("between"), id: "msg-2" })), "done");
    expect(other.job.replies?.map((reply) => reply.sequence)).toEqual([4]);

    const replayed = replayableJob({ job: dead.job, error: dead.error, attempts: 1, diedAt: T0 });
    const outcome = expectKind(await run(replayed), "done");

    expect(brain.calls).toBe(2);
    const again = poster.posted.slice(3);
    expect(again.map((post) => [post.headers["webhook-id"], post.body.text, post.body.sequence])).toEqual([
      ["reply-2", "two", 5],
      ["reply-3", "three", 6],
    ]);
    expect(outcome.job.renumber).toBeUndefined();
    expect(outcome.job.replies?.map((reply) => [reply.id, reply.sequence])).toEqual([
      ["reply-1", 1],
      ["reply-2", 5],
      ["reply-3", 6],
    ]);
  });

  it("saves the new numbers before posting, so a replay that fails again keeps them", async () => {
    const { run } = await setup({ answers: [400, 503] });
    const dead = expectKind(await run(newJob(queued("one"))), "dead");
    const saved: Job[] = [];
    const retry = expectKind(
      await run(replayableJob({ job: dead.job, error: dead.error, attempts: 1, diedAt: T0 }), (job) => {
        saved.push(job);
      }),
      "retry",
    );
    expect(saved[0]?.replies?.[0]?.sequence).toBe(2);
    expect(saved[0]?.renumber).toBeUndefined();
    expect(retry.job.replies?.[0]?.sequence).toBe(2);
  });

  it("asks the brain once, then delivers every reply in order and returns done", async () => {
    const { run, brain, poster } = await setup();
    const outcome = expectKind(await run(newJob(queued("one|two|three"))), "done");

    expect(brain.calls).toBe(1);
    expect(textsOf(poster.posted)).toEqual(["one", "two", "three"]);
    expect(poster.posted.map((post) => post.body.sequence)).toEqual([1, 2, 3]);
    expect(poster.posted.every((post) => post.url === OUTBOUND_URL)).toBe(true);
    expect(poster.posted.map((post) => post.headers["webhook-id"])).toEqual(["reply-1", "reply-2", "reply-3"]);
    expect(poster.posted[0]?.headers["webhook-timestamp"]).toBe(String(Math.floor(T0 / 1000)));
    expect(poster.posted[0]?.body).toMatchObject({
      message_id: "reply-1",
      in_reply_to: "msg-1",
      conversation_id: "conv-1",
      recipient_id: "user-1",
      brain: "echo",
    });
    expect(outcome.job).toMatchObject({ delivered: 3, attempts: 0 });
    expect(outcome.job.replies?.map((reply) => reply.id)).toEqual(["reply-1", "reply-2", "reply-3"]);
  });

  it("resumes a job that already holds replies at `delivered` without asking the brain again", async () => {
    const { run, brain, poster, store } = await setup({ answers: [200, 503, 200] });
    const first = expectKind(await run(newJob(queued("one|two|three"))), "retry");
    expect(first.job.delivered).toBe(1);

    const second = expectKind(await run(first.job), "done");

    expect(brain.calls).toBe(1);
    expect(textsOf(poster.posted)).toEqual(["one", "two", "two", "three"]);
    // The retried reply is the same rendered reply: same id, same bytes.
    expect(poster.posted[2]?.headers["webhook-id"]).toBe(poster.posted[1]?.headers["webhook-id"]);
    expect(poster.posted[2]?.body).toEqual(poster.posted[1]?.body);
    expect(second.job).toMatchObject({ delivered: 3, attempts: 0 });
    // The conversation was stored once: the user turn and three replies.
    const history = await store.history(conversationKey("webhook", "conv-1"), 100);
    expect(history.map((turn) => [turn.role, turn.text])).toEqual([
      ["user", "one|two|three"],
      ["assistant", "one"],
      ["assistant", "two"],
      ["assistant", "three"],
    ]);
  });

  it("calls the progress hook after the brain step and after each delivered reply except the last", async () => {
    const { run, poster } = await setup();
    const saved: Job[] = [];
    const postsAtSave: number[] = [];
    const onProgress: SaveHook = (job) => {
      saved.push(job);
      postsAtSave.push(poster.posted.length);
    };
    const outcome = expectKind(await run(newJob(queued("one|two|three")), onProgress), "done");

    expect(saved.map((job) => job.delivered)).toEqual([0, 1, 2]);
    expect(postsAtSave).toEqual([0, 1, 2]);
    expect(saved.every((job) => job.attempts === 0 && job.replies === outcome.job.replies)).toBe(true);
  });

  it("calls the progress hook only after the brain step for a single reply", async () => {
    const { run } = await setup();
    const saved: number[] = [];
    expectKind(
      await run(newJob(queued("only")), (job) => {
        saved.push(job.delivered);
      }),
      "done",
    );
    expect(saved).toEqual([0]);
  });

  it("returns retry on a failed delivery, keeping the delivered count and counting the attempt", async () => {
    const { run, poster, lines } = await setup({ answers: [200, 503] });
    const outcome = expectKind(await run(newJob(queued("one|two|three"))), "retry");

    expect(poster.posted).toHaveLength(2);
    expect(outcome.job.delivered).toBe(1);
    expect(outcome.job.attempts).toBe(1);
    expect(outcome.job.replies).toHaveLength(3);
    // random() is 0.5 and initial_delay_ms defaults to 1 s.
    expect(outcome.delayMs).toBe(500);
    expect(outcome.job.lastError).toEqual({
      code: "delivery_failed",
      message: "outbound_url answered 503",
      retryable: true,
      status: 503,
    });
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "warn",
        msg: "attempt failed, retrying: outbound_url answered 503",
        step: "delivery",
        reply_id: "reply-2",
        attempts: 1,
        retry_in_ms: 500,
      }),
    );
  });

  it("counts a second failure of the same step as attempt 2", async () => {
    const { run } = await setup({ answers: [503] });
    const first = expectKind(await run(newJob(queued("one"))), "retry");
    const second = expectKind(await run(first.job), "retry");
    expect(second.job.attempts).toBe(2);
    // The ceiling doubled: 0.5 × 2 s.
    expect(second.delayMs).toBe(1_000);
  });

  it("honours Retry-After from the receiver", async () => {
    const { run } = await setup({ answers: [{ status: 429, retryAfter: "7" }] });
    const outcome = expectKind(await run(newJob(queued("one"))), "retry");
    expect(outcome.delayMs).toBe(7_000);
    expect(outcome.job.lastError?.status).toBe(429);
  });

  it("returns dead with lastError.status 400 for a non-retryable status, after one attempt", async () => {
    const { run, poster } = await setup({ answers: [400] });
    const outcome = expectKind(await run(newJob(queued("one|two"))), "dead");

    expect(poster.posted).toHaveLength(1);
    expect(outcome.error).toEqual({
      code: "delivery_failed",
      message: "outbound_url answered 400",
      retryable: false,
      status: 400,
    });
    expect(outcome.job.lastError).toEqual(outcome.error);
    expect(outcome.job.delivered).toBe(0);
    expect(outcome.job.attempts).toBe(1);
  });

  it("returns dead once max_attempts is reached", async () => {
    const { run } = await setup({ answers: [503], delivery: { max_attempts: 2 } });
    const first = expectKind(await run(newJob(queued("one"))), "retry");
    const second = expectKind(await run(first.job), "dead");
    expect(second.job.attempts).toBe(2);
    expect(second.error.status).toBe(503);
  });

  it("turns a store that fails the brain's replies into a retry that asks the brain again, with the same numbers", async () => {
    const { run, brain, poster } = await setup();
    const outcome = expectKind(
      await run(newJob(queued("one|two")), () => {
        throw new Error("disk full");
      }),
      "retry",
    );

    expect(outcome.job.lastError).toEqual({
      code: "internal_error",
      message: "cannot save progress: disk full",
      retryable: true,
    });
    expect(outcome.job.attempts).toBe(1);
    // Nothing was stored, numbers and turns included: the retry starts from the brain again.
    expect(outcome.job.replies).toBeUndefined();
    expect(poster.posted).toHaveLength(0);
    const retried = expectKind(await run(outcome.job), "done");
    expect(brain.calls).toBe(2);
    expect(retried.job.replies?.map((reply) => reply.sequence)).toEqual([1, 2]);
    expect(poster.posted.map((post) => post.body.sequence)).toEqual([1, 2]);
  });

  it("stops at once, posting nothing more, when the lane refuses a write (another runner claimed it)", async () => {
    const { run, poster } = await setup();
    let saves = 0;
    const outcome = await run(newJob(queued("one|two|three")), () => {
      saves += 1;
      if (saves === 2) throw laneFencedError("webhook:conv-1");
    });
    expect(outcome.kind).toBe("fenced");
    // The first reply was posted after the brain's step was stored; its delivery's write was refused.
    expect(poster.posted.map((post) => post.body.text)).toEqual(["one"]);
  });

  it("turns a progress hook that rejects after a delivery into a retry that keeps the delivery", async () => {
    const { run, poster } = await setup();
    let saves = 0;
    const outcome = expectKind(
      await run(newJob(queued("one|two|three")), async () => {
        saves += 1;
        if (saves === 2) throw new Error("store unavailable");
      }),
      "retry",
    );
    expect(outcome.job.delivered).toBe(1);
    expect(outcome.job.lastError?.code).toBe("internal_error");
    expect(outcome.job.lastError?.retryable).toBe(true);
    expect(textsOf(poster.posted)).toEqual(["one"]);
  });

  it("returns dead with config_invalid for an unknown channel, asking no brain and posting nothing", async () => {
    const { run, brain, poster } = await setup();
    const outcome = expectKind(await run(newJob(queued("one", "elsewhere"))), "dead");

    expect(outcome.error).toEqual({
      code: "config_invalid",
      message: 'no channel named "elsewhere" is configured',
      retryable: false,
    });
    expect(outcome.job.lastError).toEqual(outcome.error);
    expect(brain.calls).toBe(0);
    expect(poster.posted).toHaveLength(0);
  });

  it("retries a failing brain without replies, so the retry asks the brain again", async () => {
    let failing = true;
    const brain = countingEcho(() => (failing ? new Error("model overloaded") : undefined));
    const { run, poster, lines } = await setup({ brain });
    const first = expectKind(await run(newJob(queued("one"))), "retry");

    expect(first.job.replies).toBeUndefined();
    expect(first.job.lastError).toMatchObject({ code: "brain_failed", retryable: true });
    expect(first.job.attempts).toBe(1);
    expect(lines).toContainEqual(expect.objectContaining({ level: "warn", step: "brain", code: "brain_failed" }));

    failing = false;
    expectKind(await run(first.job), "done");
    expect(brain.calls).toBe(2);
    expect(textsOf(poster.posted)).toEqual(["one"]);
  });

  it("stamps stepStartedAt with the injected clock at the start of the attempt", async () => {
    // The POST takes 2 s of fake time: stepStartedAt is when it began, not when it failed.
    const { run, clock } = await setup({ answers: [503, 503, 200], duringPost: (c) => c.advance(2_000) });
    const start = T0 + 123_456;
    clock.set(start);

    const first = expectKind(await run(newJob(queued("one"))), "retry");
    expect(first.job.stepStartedAt).toBe(start);

    clock.advance(60_000);
    const second = expectKind(await run(first.job), "retry");
    expect(second.job.stepStartedAt).toBe(start);
    expect(second.job.attempts).toBe(2);

    // A finished step leaves no failure state behind.
    const done = expectKind(await run(second.job), "done");
    expect(done.job.stepStartedAt).toBeUndefined();
    expect(done.job.lastError).toBeUndefined();
    expect(done.job.attempts).toBe(0);
  });

  it("stamps stepStartedAt of a failed brain step with the injected clock", async () => {
    const brain = countingEcho(() => new Error("down"));
    const { run, clock } = await setup({ brain });
    clock.set(T0 + 42);
    const outcome = expectKind(await run(newJob(queued("one"))), "retry");
    expect(outcome.job.stepStartedAt).toBe(T0 + 42);
  });

  it('logs the "410 Gone" error line and dead-letters on 410', async () => {
    const { run, lines } = await setup({ answers: [410] });
    const outcome = expectKind(await run(newJob(queued("one"))), "dead");

    expect(outcome.error.status).toBe(410);
    const gone = lines.filter((line) => String(line.msg).includes("410 Gone"));
    expect(gone).toEqual([
      expect.objectContaining({
        level: "error",
        msg: "outbound_url answered 410 Gone: the receiver says it no longer exists",
        channel: "webhook",
        message_id: "msg-1",
        reply_id: "reply-1",
        step: "delivery",
        code: "delivery_failed",
        status: 410,
        attempts: 1,
        url: OUTBOUND_URL,
      }),
    ]);
  });

  it('does not log "410 Gone" for another non-retryable status', async () => {
    const { run, lines } = await setup({ answers: [404] });
    expectKind(await run(newJob(queued("one"))), "dead");
    expect(lines.some((line) => String(line.msg).includes("410 Gone"))).toBe(false);
  });
});
