import { describe, expect, it } from "vitest";
import { COMMIT_LAG_MS, createCommitLag } from "../../../src/node/queue/commit-lag.js";

describe("commit lag", () => {
  it("lags only while the oldest write still waiting was asked more than the bound ago", () => {
    let now = 0;
    const commits = createCommitLag(() => now);
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
});
