import { ChannelError } from "../../../core/channel-error.js";
import type { StateDb } from "./sqlite-state.js";

/** The state file's claim by one service process: the epoch its tickets carry. */
export interface SqliteEpoch {
  readonly value: number;
  /** Throws `lane_fenced` when another process has claimed the file since: call inside a write's transaction. */
  check(): void;
}

/**
 * Claims the state file for this process: the epoch in `meta` rises by one, and this process's
 * lanes write under the new value. A process that opened the file earlier (paused, frozen, or
 * started twice by mistake) finds the epoch moved at its next write, which is refused, so two
 * processes never run the same lanes. Readers (the CLI, the delivery thread) never claim.
 */
export function claimSqliteEpoch(db: StateDb): SqliteEpoch {
  const row = db
    .prepare<[], { value: number }>(
      "INSERT INTO meta (name, value) VALUES ('epoch', 1) ON CONFLICT (name) DO UPDATE SET value = value + 1 RETURNING value",
    )
    .get();
  const value = row?.value ?? 1;
  const read = db.prepare<[], { value: number }>("SELECT value FROM meta WHERE name = 'epoch'");
  return {
    value,
    check() {
      if (read.get()?.value === value) return;
      throw new ChannelError(
        "lane_fenced",
        "another webhook-channel process opened the same state_dir since this one started: this one writes nothing more",
        { retryable: false },
      );
    },
  };
}
