import type { Pool } from "pg";
import type { JobNotice } from "../state/postgres/job-notices.js";
import {
  type Claim,
  type ClaimRequest,
  claimLanes,
  notifyOwners,
  type Release,
  releaseLanes,
} from "./lane-statements.js";
import { createStatementBatch } from "./statement-batch.js";

/** A replica's lane statements, each batched per event-loop turn: one round trip for a turn's claims, notices or releases. */
export interface LaneBatches {
  claim(request: ClaimRequest): Promise<Claim>;
  notify(notice: JobNotice & { readonly owner: string }): Promise<true>;
  release(conversation: string): Promise<Release>;
}

/** Batches the lane statements of `replica`; `mayTakeOver` says whether a claim may take a lapsed owner's lane. */
export function createLaneBatches(pool: Pool, replica: string, mayTakeOver: () => boolean): LaneBatches {
  const claim = createStatementBatch<ClaimRequest, Claim>((requests) =>
    claimLanes(pool, replica, mayTakeOver(), requests),
  );
  const notify = createStatementBatch<JobNotice & { owner: string }, true>(async (notices) => {
    await notifyOwners(pool, notices);
    return notices.map(() => true as const);
  });
  const release = createStatementBatch<string, Release>((conversations) => releaseLanes(pool, replica, conversations));
  return { claim, notify, release };
}
