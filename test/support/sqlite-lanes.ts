import { conversationKey } from "../../src/core/conversation/conversation-store.js";
import type { DeadLetter } from "../../src/core/dead-letters/dead-letter.js";
import type { Job } from "../../src/core/lifecycle/job.js";
import type { LaneTicket } from "../../src/core/lifecycle/lane-store.js";
import { createSqliteConversationStore } from "../../src/node/state/sqlite/sqlite-conversation-store.js";
import { claimSqliteEpoch } from "../../src/node/state/sqlite/sqlite-epoch.js";
import { createGroupCommit } from "../../src/node/state/sqlite/sqlite-group-commit.js";
import { createSqliteLaneStore, type SqliteLaneStore } from "../../src/node/state/sqlite/sqlite-lane-store.js";
import type { StateDb } from "../../src/node/state/sqlite/sqlite-state.js";
import type { StateBackend } from "../../src/node/state/state-backend.js";
import { createLogSink } from "./log-sink.js";

/** The lane store of a state database as a service process opens it (claiming the file). */
export function openSqliteLanes(db: StateDb): SqliteLaneStore {
  const { logger } = createLogSink();
  const epoch = claimSqliteEpoch(db);
  const group = createGroupCommit(db, logger, epoch.check);
  return createSqliteLaneStore(db, logger, group, epoch, createSqliteConversationStore(db, undefined, group));
}

/** The ticket of `job`'s lane in a store that runs its lanes alone (memory, SQLite). */
export function ticketOf(store: { readonly epoch: number }, job: Job): LaneTicket {
  return { key: conversationKey(job.message.channel, job.message.message.conversationId), epoch: store.epoch };
}

/** Buries a letter as the lane runner does, under its lane's ticket. */
export function buryIn(store: SqliteLaneStore, letter: DeadLetter): void | Promise<void> {
  return store.bury(ticketOf(store, letter.job), letter);
}

/** Stores `dead`, buries it as a run that gave up on it would, then replays it (the admin API's restore). */
export async function deadThenReplayed(state: StateBackend, dead: Job): Promise<void> {
  const lanes = state.sqlite?.lanes;
  if (lanes === undefined) throw new Error("no SQLite lanes");
  await lanes.add(dead);
  await buryIn(lanes, {
    job: dead,
    error: { code: "delivery_failed", message: "400", retryable: false },
    attempts: 1,
    diedAt: 2,
  });
  await state.lanes.restore(dead);
}
