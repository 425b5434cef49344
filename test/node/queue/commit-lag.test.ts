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
    // The oldest settles: the next oldest, asked at 500, has waited less than the bound.
    commits.settled("a");
    expect(commits.lagging()).toBe(false);
    now = 500 + COMMIT_LAG_MS + 1;
    expect(commits.lagging()).toBe(true);
    commits.settled("b");
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
    commits.settled("a");
    commits.settled("b");
    expect(lines.map(({ level, channel, waiting, waited_ms }) => ({ level, channel, waiting, waited_ms }))).toEqual([
      { level: "warn", channel: "web", waiting: 2, waited_ms: COMMIT_LAG_MS + 10 },
      { level: "info", channel: "web", waiting: undefined, waited_ms: undefined },
    ]);
    expect(lines[0]?.msg).toContain("503 buffer_full");
  });
});
