import { describe, expect, it } from "vitest";
import type { RunHooks } from "../../../src/core/consumer/create-consumer.js";
import type { Job, JobOutcome } from "../../../src/core/lifecycle/job.js";
import { runHead, settleRun } from "../../../src/core/lifecycle/lane-runner.js";
import { type LaneStore, type LaneTicket, laneFencedError } from "../../../src/core/lifecycle/lane-store.js";
import { UNSTORED_RETRY_MS } from "../../../src/core/lifecycle/settle-outcome.js";
import { createLevelLogger, type LogLevel } from "../../../src/core/log/logger.js";

const NOW = Date.UTC(2026, 10, 26, 10, 0, 0);
const TICKET: LaneTicket = { key: "7:webhook:conv-1", epoch: 3 };
const JOB: Job = {
  message: {
    id: "msg-1",
    channel: "webhook",
    receivedAt: NOW - 1_000,
    message: { senderId: "u1", conversationId: "conv-1", text: "hi" },
  },
  delivered: 0,
  attempts: 0,
};
const ANSWERED: Job = { ...JOB, replies: [{ id: "reply-1", sequence: 5, body: '{"text":"secret words"}' }] };

/** A lane store that records every call, with the ticket each write came with. */
function recordingStore(overrides: Partial<LaneStore> = {}) {
  const calls: string[] = [];
  const note = (what: string, ticket: LaneTicket) => void calls.push(`${what} ${ticket.key}@${ticket.epoch}`);
  const store: LaneStore = {
    add: () => undefined,
    lastSequence: (ticket) => {
      note("lastSequence", ticket);
      return 4;
    },
    save: (ticket, job, answered) =>
      note(`save ${job.replies?.length ?? 0} ${answered === undefined ? "" : "answered"}`, ticket),
    finish: (ticket) => note("finish", ticket),
    postpone: (ticket, _job, dueAt) => note(`postpone +${dueAt - NOW}`, ticket),
    hold: (ticket, _job, until) => note(`hold +${until - NOW}`, ticket),
    bury: (ticket) => note("bury", ticket),
    restore: () => undefined,
    takeReplayed: () => [],
    ...overrides,
  };
  const lines: { level: LogLevel; msg: string; fields: string }[] = [];
  const logger = createLevelLogger((level, msg, fields) => {
    lines.push({ level, msg, fields: JSON.stringify(fields) });
    calls.push(`log ${level} ${msg}`);
  }, "info");
  return { store, calls, lines, logger };
}

const deps = (store: LaneStore, logger = recordingStore().logger) => ({
  store,
  now: () => NOW,
  replayHint: (id: string) => `replay ${id}`,
  logger,
});

describe("runHead", () => {
  it("numbers a job's new replies after the lane's last and stores each step under the lane's ticket", async () => {
    const { store, calls, logger } = recordingStore();
    let hooks: RunHooks | undefined;
    const result = await runHead(TICKET, JOB, {
      ...deps(store, logger),
      run: async (_job, given) => {
        hooks = given;
        await given.save(ANSWERED, { turns: [] });
        return { kind: "done", job: ANSWERED } satisfies JobOutcome;
      },
    });
    expect(hooks?.firstSequence).toBe(5);
    expect(result).toMatchObject({ kind: "settled", settlement: { kind: "finish" } });
    expect(calls).toEqual([
      `lastSequence ${TICKET.key}@3`,
      `save 1 answered ${TICKET.key}@3`,
      `finish ${TICKET.key}@3`,
    ]);
  });

  it("reads no number for a job whose replies exist already", async () => {
    const { store, calls } = recordingStore();
    await runHead(TICKET, ANSWERED, { ...deps(store), run: async (job) => ({ kind: "done", job }) });
    expect(calls).toEqual([`finish ${TICKET.key}@3`]);
  });

  it("does not run a job whose lane's last number cannot be read: it tries again shortly, unchanged", async () => {
    let ran = false;
    const { store, lines, logger } = recordingStore({
      lastSequence: () => Promise.reject(new Error("connection refused")),
    });
    const result = await runHead(TICKET, JOB, {
      ...deps(store, logger),
      run: async (job) => {
        ran = true;
        return { kind: "done", job };
      },
    });
    expect(ran).toBe(false);
    expect(result).toEqual({
      kind: "settled",
      settlement: { kind: "postpone", job: JOB, dueAt: NOW + UNSTORED_RETRY_MS },
      stored: undefined,
    });
    expect(lines[0]?.msg).toContain("connection refused");
  });

  it("settles nothing of a run the lane fenced: the runtime lets the lane go", async () => {
    const { store, calls } = recordingStore();
    const result = await runHead(TICKET, ANSWERED, { ...deps(store), run: async (job) => ({ kind: "fenced", job }) });
    expect(result).toEqual({ kind: "fenced", job: ANSWERED });
    expect(calls).toEqual([]);
  });
});

describe("settleRun", () => {
  it("carries each settlement out on the store, once, under the ticket", async () => {
    const { store, calls } = recordingStore();
    await settleRun(TICKET, { kind: "retry", job: JOB, delayMs: 10 }, deps(store));
    await settleRun(TICKET, { kind: "wait", job: JOB, until: NOW + 20 }, deps(store));
    expect(calls).toEqual([`postpone +10 ${TICKET.key}@3`, `hold +20 ${TICKET.key}@3`]);
  });

  it("logs a dead letter only once it is stored, and the letter's content never above debug", async () => {
    const { store, calls, lines, logger } = recordingStore();
    const error = { code: "delivery_failed", message: "outbound_url answered 400", retryable: false, status: 400 };
    const result = await settleRun(TICKET, { kind: "dead", job: ANSWERED, error }, deps(store, logger));
    expect(result).toMatchObject({ kind: "settled", settlement: { kind: "bury" } });
    expect(calls).toEqual([`bury ${TICKET.key}@3`, "log error dead letter: outbound_url answered 400"]);
    expect(JSON.stringify(lines)).not.toContain("secret words");
  });

  it("waits for a store that keeps the letter asynchronously before logging it", async () => {
    let release: () => void = () => undefined;
    const { store, calls, logger } = recordingStore({
      bury: () =>
        new Promise<void>((resolve) => {
          release = () => {
            calls.push("bury stored");
            resolve();
          };
        }),
    });
    const error = { code: "brain_failed", message: "gave up", retryable: false };
    const settled = settleRun(TICKET, { kind: "dead", job: JOB, error }, deps(store, logger));
    await Promise.resolve();
    expect(calls).toEqual([]);
    release();
    await settled;
    expect(calls).toEqual(["bury stored", "log error dead letter: gave up"]);
  });

  it("runs a job whose letter cannot be stored again shortly, as stored, and reports no dead letter", async () => {
    const { store, lines, logger } = recordingStore({
      bury: () => {
        throw new Error("database is locked");
      },
    });
    const error = { code: "brain_failed", message: "gave up", retryable: false };
    const result = await settleRun(TICKET, { kind: "dead", job: JOB, error }, deps(store, logger));
    expect(result).toMatchObject({ kind: "settled", settlement: { kind: "postpone", dueAt: NOW + UNSTORED_RETRY_MS } });
    expect(lines.map((line) => line.msg)).toEqual(["cannot store a dead letter: database is locked"]);
  });

  it("answers fenced when the lane refuses the burial", async () => {
    const { store } = recordingStore({ bury: () => Promise.reject(laneFencedError(TICKET.key)) });
    const error = { code: "brain_failed", message: "gave up", retryable: false };
    expect(await settleRun(TICKET, { kind: "dead", job: JOB, error }, deps(store))).toEqual({
      kind: "fenced",
      job: JOB,
    });
  });

  it("hands the other writes over unwaited, a write that throws as a rejection", async () => {
    const { store } = recordingStore({
      finish: () => {
        throw new Error("disk I/O error");
      },
    });
    const result = await settleRun(TICKET, { kind: "done", job: ANSWERED }, deps(store));
    if (result.kind !== "settled") throw new Error("expected a settlement");
    await expect(result.stored).rejects.toThrow("disk I/O error");
  });
});
