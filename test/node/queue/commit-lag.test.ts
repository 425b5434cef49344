import { describe, expect, it } from "vitest";
import { COMMIT_LAG_MS, createCommitLag } from "../../../src/node/queue/commit-lag.js";
import { createLogSink } from "../../support/log-sink.js";

describe("commit lag", () => {
  it("lags only while the oldest write still waiting was asked more than the bound ago", () => {
    let now = 0;
    const { logger } = createLogSink();
    const commits = createCommitLag(() => now, logger, "web");
    expect(commits.lagging()).toBe(false);
    commits.asked("a");
    now = 500;
    commits.asked("b");
    now = COMMIT_LAG_MS;
    expect(commits.lagging()).toBe(false);
    now = COMMIT_LAG_MS + 1;
    expect(commits.lagging()).toBe(true);
    // The oldest fails (nothing committed, so no rate to weigh): the next oldest, asked at 500,
    // has waited less than the bound.
    commits.settled("a", false);
    expect(commits.lagging()).toBe(false);
    now = 500 + COMMIT_LAG_MS + 1;
    expect(commits.lagging()).toBe(true);
    commits.settled("b", false);
    expect(commits.lagging()).toBe(false);
  });

  it("says once when a spell of lagging is first seen and once when it ends", () => {
    let now = 0;
    const { logger, lines } = createLogSink("info");
    const commits = createCommitLag(() => now, logger, "web");
    commits.asked("a");
    commits.asked("b");
    now = COMMIT_LAG_MS + 10;
    expect(commits.lagging() && commits.lagging()).toBe(true);
    commits.settled("a", true);
    commits.settled("b", true);
    expect(
      lines.map(({ level, channel, waiting, waited_ms, committed_last_second }) => ({
        level,
        channel,
        waiting,
        waited_ms,
        committed_last_second,
      })),
    ).toEqual([
      { level: "warn", channel: "web", waiting: 2, waited_ms: COMMIT_LAG_MS + 10, committed_last_second: 0 },
      { level: "info", channel: "web", waiting: undefined, waited_ms: undefined, committed_last_second: undefined },
    ]);
    expect(lines[0]?.msg).toContain("503 buffer_full");
  });

  it("keeps taking messages while one write is stuck but the store commits more than wait", () => {
    let now = 0;
    const { logger } = createLogSink();
    const commits = createCommitLag(() => now, logger, undefined);
    // One write waits behind something (a lock, a slow batch) while the rest commit in 100 ms.
    commits.asked("stuck");
    for (let index = 0; now < 3 * COMMIT_LAG_MS; index += 1) {
      commits.asked(`m${index}`);
      if (index >= 5) commits.settled(`m${index - 5}`, true);
      now += 20;
      expect(commits.lagging()).toBe(false);
    }
  });

  it("refuses once more wait than the store committed in the last second", () => {
    let now = 0;
    const { logger } = createLogSink();
    const commits = createCommitLag(() => now, logger, undefined);
    for (let index = 0; index < 5; index += 1) {
      commits.asked(`old${index}`);
      now += 100;
      commits.settled(`old${index}`, true);
    }
    // The store freezes: six wait and none commits.
    for (let index = 0; index < 6; index += 1) commits.asked(`new${index}`);
    now += COMMIT_LAG_MS / 2;
    expect(commits.lagging()).toBe(false);
    now += COMMIT_LAG_MS / 2 + 1;
    expect(commits.lagging()).toBe(true);
  });

  it("does not count failed writes as commits", () => {
    let now = 0;
    const { logger } = createLogSink();
    const commits = createCommitLag(() => now, logger, undefined);
    commits.asked("stuck");
    now = COMMIT_LAG_MS + 1;
    for (let index = 0; index < 20; index += 1) {
      commits.asked(`timed-out${index}`);
      commits.settled(`timed-out${index}`, false);
    }
    expect(commits.lagging()).toBe(true);
  });

  it("weighs the waiting against a whole second of commits", () => {
    let now = 0;
    const { logger } = createLogSink();
    const commits = createCommitLag(() => now, logger, undefined);
    // Ten commits a second, each 700 ms after it was asked, and one write stuck: eight wait.
    commits.asked("stuck");
    for (let index = 0; now < 4 * COMMIT_LAG_MS; index += 1) {
      commits.asked(`m${index}`);
      if (index >= 7) commits.settled(`m${index - 7}`, true);
      now += 100;
      if (now > 2 * COMMIT_LAG_MS) expect(commits.lagging()).toBe(false);
    }
  });

  it("refuses with state_unavailable while the store is known not to take writes, through a freeze of any length", () => {
    let now = 0;
    let problem: string | undefined;
    const { logger, lines } = createLogSink("info");
    const commits = createCommitLag(
      () => now,
      logger,
      undefined,
      () => problem,
    );
    expect(commits.refusal()).toBeUndefined();
    commits.asked("a");
    now = COMMIT_LAG_MS + 1;
    expect(commits.refusal()).toMatchObject({ code: "buffer_full", retryAfterSeconds: 5 });
    problem = "postgres unreachable: no answer";
    expect(commits.refusal()).toMatchObject({ code: "state_unavailable", status: 503, retryAfterSeconds: 5 });
    // The waiting write gives up: the spell of lagging is over, the known problem still refuses,
    // and nothing says the database commits again.
    commits.settled("a", false);
    now = 10 * COMMIT_LAG_MS;
    expect(commits.refusal()).toMatchObject({ code: "state_unavailable" });
    expect(lines.map((line) => line.level)).toEqual(["warn"]);
    problem = undefined;
    expect(commits.refusal()).toBeUndefined();
    commits.asked("b");
    commits.settled("b", true);
    expect(lines.map((line) => line.level)).toEqual(["warn", "info"]);
  });
});
