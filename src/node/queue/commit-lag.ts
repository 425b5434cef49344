/**
 * How long the oldest accepted message may wait for its store's commit before the queue takes no
 * more: a database that falls behind (saturated, checkpointing, frozen) would otherwise gather
 * requests that each wait for the commit's time limit and then get 503 `state_unavailable`,
 * while new ones add to its load. Refused at once with 503 `buffer_full` instead, clients back
 * off and the database catches up; the queue takes messages again as soon as the waiting commits
 * settle. Well above a healthy commit, well below the commit's own time limit.
 */
export const COMMIT_LAG_MS = 1_000;

/** The accepted messages whose store writes are still waiting for their commit. */
export interface CommitLag {
  /** Message `id`'s write was asked for now. */
  asked(id: string): void;
  /** Message `id`'s write committed or failed. */
  settled(id: string): void;
  /** True while the oldest write still waiting was asked more than {@link COMMIT_LAG_MS} ago. */
  lagging(): boolean;
}

/** A {@link CommitLag} on the queue's clock. */
export function createCommitLag(now: () => number): CommitLag {
  // In the order asked, so the first entry is the oldest.
  const waiting = new Map<string, number>();
  return {
    asked: (id) => {
      waiting.set(id, now());
    },
    settled: (id) => {
      waiting.delete(id);
    },
    lagging: () => {
      for (const askedAt of waiting.values()) return now() - askedAt > COMMIT_LAG_MS;
      return false;
    },
  };
}
