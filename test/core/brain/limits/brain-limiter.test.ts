import { describe, expect, it } from "vitest";
import { backoffPauseMs, createBrainLimiter, type Schedule } from "../../../../src/core/brain/limits/brain-limiter.js";
import { ChannelError } from "../../../../src/core/channel-error.js";
import { manualClock } from "../../../support/brain-harness.js";
import { failure } from "../../../support/failure.js";

// The limiter on its own, with a manual clock and timers the test fires itself. The calls are
// promises the test settles: what a brain's server would answer is beside the point here
// (test/core/brain/limits/brain-limits-pauses.test.ts runs the limits against real servers).

/** Timers that run only when the test says so. */
function manualTimers(): { schedule: Schedule; fire(): void; pending(): number } {
  const callbacks: (() => void)[] = [];
  return {
    schedule: (callback) => {
      callbacks.push(callback);
    },
    fire: () => {
      for (const callback of callbacks.splice(0)) callback();
    },
    pending: () => callbacks.length,
  };
}

/** A call the test settles by hand. */
function pendingCall<T>(): { call: () => Promise<T>; resolve(value: T): void; reject(error: unknown): void } {
  let resolve: (value: T) => void = () => undefined;
  let reject: (error: unknown) => void = () => undefined;
  const promise = new Promise<T>((onResolve, onReject) => {
    resolve = onResolve;
    reject = onReject;
  });
  return { call: () => promise, resolve: (value) => resolve(value), reject: (error) => reject(error) };
}

function upstream(status: number, retryAfterMs?: number): ChannelError {
  return new ChannelError("brain_failed", `brain "bot": the bot answered ${status}`, {
    retryable: true,
    upstreamStatus: status,
    brain: "bot",
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}

const limits = { maxConcurrency: 2, leaseMs: 10_000 };

describe("brain limiter", () => {
  it("doubles the pause without Retry-After from 1 s up to 60 s", () => {
    expect([1, 2, 3, 4, 6, 7, 8, 40].map(backoffPauseMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 32_000, 60_000, 60_000, 60_000,
    ]);
  });

  it("with waiterPollMs, settles a waiting call on its own timer, not from the call that freed the slot or began the pause", async () => {
    const clock = manualClock();
    const timers = manualTimers();
    const one = { maxConcurrency: 1, leaseMs: 10_000 };
    const limiter = createBrainLimiter("bot", { clock, schedule: timers.schedule, waiterPollMs: 20 });
    const first = pendingCall<string>();
    const running = limiter.run("a", one, first.call);
    let settled = "";
    const admitted = limiter
      .run("b", one, async () => "b answered")
      .then((value) => {
        settled = value;
      });
    first.resolve("a answered");
    expect(await running).toBe("a answered");
    // The slot is b's, but b hears it only when its own timer looks.
    expect(limiter.inFlight()).toBe(1);
    await Promise.resolve();
    expect(settled).toBe("");
    timers.fire();
    await admitted;
    expect(settled).toBe("b answered");

    const second = pendingCall<string>();
    const inFlight = limiter.run("c", one, second.call);
    const refused = failure(limiter.run("d", one, async () => "never"));
    second.reject(upstream(429, 5_000));
    await failure(inFlight);
    timers.fire();
    expect((await refused).message).toContain("is paused");
  });

  it("with waiterPollMs, refuses a waiter that stopped looking instead of giving it a slot", async () => {
    const clock = manualClock();
    const timers = manualTimers();
    const one = { maxConcurrency: 1, leaseMs: 60_000 };
    const limiter = createBrainLimiter("bot", { clock, schedule: timers.schedule, waiterPollMs: 20 });
    const first = pendingCall<string>();
    const running = limiter.run("a", one, first.call);
    const gone = failure(limiter.run("b", one, async () => "never"));
    // b's object is gone: its timer does not fire for longer than a waiter may go without looking.
    clock.advance(11_000);
    first.resolve("a answered");
    await running;
    expect(limiter.inFlight()).toBe(0);
    timers.fire();
    expect((await gone).message).toContain("stopped waiting for a slot");
  });

  it("with waiterPollMs, a waiting call's own look takes back a lost call's slot when the lease timer never fires", async () => {
    const clock = manualClock();
    const polls: (() => void)[] = [];
    // The lease timer was set in an object that is gone since: only the waiter's looks run.
    const schedule: Schedule = (callback, ms) => {
      if (ms <= 20) polls.push(callback);
    };
    const one = { maxConcurrency: 1, leaseMs: 1_000 };
    const limiter = createBrainLimiter("bot", { clock, schedule, waiterPollMs: 20 });
    void limiter.run("lost", one, () => new Promise<string>(() => undefined));
    const waiting = limiter.run("b", one, async () => "b answered");
    clock.advance(1_001);
    for (const poll of polls.splice(0)) poll();
    expect(await waiting).toBe("b answered");
  });

  it("refuses the calls waiting for a slot when a pause begins, and lets the calls in flight finish", async () => {
    const clock = manualClock();
    const limiter = createBrainLimiter("bot", { clock, schedule: manualTimers().schedule });
    const first = pendingCall<string>();
    const second = pendingCall<string>();
    const running = [limiter.run("a", limits, first.call), limiter.run("b", limits, second.call)];
    let called = 0;
    const waiting = [1, 2, 3].map((index) =>
      limiter.run(`w${index}`, limits, async () => {
        called += 1;
        return "never";
      }),
    );
    expect(limiter.waiting()).toBe(3);

    first.reject(upstream(429, 5_000));
    expect((await failure(running[0] ?? Promise.resolve())).upstreamStatus).toBe(429);
    for (const refused of waiting) {
      expect(await failure(refused)).toMatchObject({ retryable: true, retryAfterMs: 5_000, brain: "bot" });
    }
    expect(limiter.inFlight()).toBe(1);
    second.resolve("late but fine");
    expect(await running[1]).toBe("late but fine");
    expect(called).toBe(0);
    expect(limiter.inFlight()).toBe(0);
  });

  it("lets a 429 of a call that was in flight lengthen the pause to its own Retry-After, never shorten or double it", async () => {
    const clock = manualClock();
    const limiter = createBrainLimiter("bot", { clock, schedule: manualTimers().schedule });
    const calls = [pendingCall<string>(), pendingCall<string>(), pendingCall<string>()];
    const runs = calls.map((call, index) => limiter.run(`c${index}`, { ...limits, maxConcurrency: 3 }, call.call));
    const start = clock.now();

    calls[0]?.reject(upstream(429, 2_000));
    await failure(runs[0] ?? Promise.resolve());
    expect(limiter.pausedUntil()).toBe(start + 2_000);
    calls[1]?.reject(upstream(503));
    await failure(runs[1] ?? Promise.resolve());
    expect(limiter.pausedUntil()).toBe(start + 2_000);
    calls[2]?.reject(upstream(429, 9_000));
    await failure(runs[2] ?? Promise.resolve());
    expect(limiter.pausedUntil()).toBe(start + 9_000);
  });

  it("reports when a pause ends, and again with the new end only when a call in flight lengthens it", async () => {
    const clock = manualClock();
    const timers = manualTimers();
    const reported: [boolean, number | undefined][] = [];
    const limiter = createBrainLimiter("bot", {
      clock,
      schedule: timers.schedule,
      metrics: {
        brainInFlight: () => undefined,
        brainPaused: (_brain, paused, untilMs) => reported.push([paused, untilMs]),
      },
    });
    const calls = [pendingCall<string>(), pendingCall<string>(), pendingCall<string>(), pendingCall<string>()];
    const runs = calls.map((call, index) => limiter.run(`c${index}`, { ...limits, maxConcurrency: 4 }, call.call));
    const start = clock.now();

    calls[0]?.reject(upstream(429, 2_000));
    await failure(runs[0] ?? Promise.resolve());
    expect(reported).toEqual([
      [false, undefined],
      [true, start + 2_000],
    ]);
    // No Retry-After, or a shorter one: the end stands, and nothing is reported.
    clock.advance(500);
    calls[1]?.reject(upstream(503));
    await failure(runs[1] ?? Promise.resolve());
    calls[2]?.reject(upstream(429, 1_000));
    await failure(runs[2] ?? Promise.resolve());
    expect(reported).toHaveLength(2);
    // A longer one moves the end, and the new end is reported.
    calls[3]?.reject(upstream(429, 9_000));
    await failure(runs[3] ?? Promise.resolve());
    expect(reported.at(-1)).toEqual([true, start + 500 + 9_000]);
    expect(limiter.pausedUntil()).toBe(start + 500 + 9_000);

    // The first end's timer finds the pause still running; the lengthened end resumes it.
    clock.advance(1_500);
    timers.fire();
    expect(reported).toHaveLength(3);
    clock.advance(7_500);
    timers.fire();
    expect(reported.at(-1)).toEqual([false, undefined]);
  });

  it("does not pause for other failures", async () => {
    const limiter = createBrainLimiter("bot", { clock: manualClock() });
    for (const error of [upstream(500), upstream(502), upstream(401), new Error("boom")]) {
      await expect(limiter.run("a", limits, () => Promise.reject(error))).rejects.toBe(error);
    }
    expect(limiter.pausedUntil()).toBeUndefined();
    await expect(limiter.run("a", limits, async () => "ok")).resolves.toBe("ok");
  });

  it("reports the end of a pause by its timer, though no call comes, and only once the clock has passed it", async () => {
    const clock = manualClock();
    const timers = manualTimers();
    const reported: boolean[] = [];
    const limiter = createBrainLimiter("bot", {
      clock,
      schedule: timers.schedule,
      metrics: { brainInFlight: () => undefined, brainPaused: (_brain, paused) => reported.push(paused) },
    });
    await failure(limiter.run("a", limits, () => Promise.reject(upstream(503, 3_000))));
    expect(reported).toEqual([false, true]);
    // A timer that fires early (or a clock that stands still) changes nothing and is set again.
    timers.fire();
    expect(reported).toEqual([false, true]);
    expect(timers.pending()).toBe(1);
    clock.advance(3_000);
    timers.fire();
    expect(reported).toEqual([false, true, false]);
    expect(limiter.pausedUntil()).toBeUndefined();
  });

  it("takes back the slot of a call that never ends once its lease runs out, so the calls waiting get through", async () => {
    const clock = manualClock();
    const timers = manualTimers();
    const limiter = createBrainLimiter("bot", { clock, schedule: timers.schedule });
    const lease = { maxConcurrency: 1, leaseMs: 35_000 };
    // A call of a request that was cancelled (on Workers its promise may never settle).
    const lost = limiter.run("a", lease, () => new Promise<string>(() => undefined));
    const next = limiter.run("b", lease, async () => "answered");
    expect(limiter.waiting()).toBe(1);
    expect(lost).toBeInstanceOf(Promise);

    clock.advance(34_999);
    timers.fire();
    expect(limiter.waiting()).toBe(1);
    clock.advance(1);
    timers.fire();
    await expect(next).resolves.toBe("answered");
    expect(limiter.inFlight()).toBe(0);
  });

  it("applies each call's own cap, so a reload that lowers max_concurrency holds new calls back until enough have ended", async () => {
    const limiter = createBrainLimiter("bot", { clock: manualClock() });
    const old = [pendingCall<string>(), pendingCall<string>(), pendingCall<string>()];
    const oldRuns = old.map((call, index) => limiter.run(`o${index}`, { ...limits, maxConcurrency: 3 }, call.call));
    let started = 0;
    const newRun = limiter.run("n", { ...limits, maxConcurrency: 2 }, async () => {
      started += 1;
      return "new";
    });
    old[0]?.resolve("o0");
    await oldRuns[0];
    expect(started).toBe(0);
    old[1]?.resolve("o1");
    await oldRuns[1];
    await expect(newRun).resolves.toBe("new");
    old[2]?.resolve("o2");
    await oldRuns[2];
    expect(limiter.inFlight()).toBe(0);
  });
});
