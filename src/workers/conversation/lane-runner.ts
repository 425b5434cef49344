import { errorMessage } from "../../core/channel-error.js";
import type { Consumer } from "../../core/consumer/create-consumer.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import type { Job } from "../../core/lifecycle/job.js";
import { type JobLedger, writeSettlement } from "../../core/lifecycle/job-ledger.js";
import { jobKey } from "../../core/lifecycle/pending-job-store.js";
import { settleOutcome } from "../../core/lifecycle/settle-outcome.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { type DeadLetterBody, fitsInline } from "../queue-body.js";
import type { ReceiverLink } from "../receiver/receiver-link.js";
import type { ConversationLane } from "./conversation-lane.js";

/**
 * Jobs one alarm invocation runs at most; the next invocation (an alarm set for now) goes on
 * with fresh budgets of subrequests and CPU time. Each job takes one subrequest per reply,
 * plus one for a brain that calls out, far below the 10,000 of an invocation.
 */
export const MAX_JOBS_PER_RUN = 50;

/** Wait before the head is tried again when nothing can run it, or the dead-letter queue refused it. */
export const BLOCKED_RETRY_MS = 60_000;

/** What running a conversation's lane needs. */
export interface LaneRunnerDeps {
  readonly lane: ConversationLane;
  /** The core consumer; undefined while the configuration is unusable (jobs then wait). */
  readonly consumer: Pick<Consumer, "run"> | undefined;
  /** Producer of the dead-letter queue. */
  readonly deadLetters: Queue<unknown>;
  /** Keeps a job where the dead-letter consumer finds it, for a letter too large to carry it. */
  readonly park: (job: Job) => void;
  /** What a dead letter's log line says about replaying it. */
  readonly replayHint: (id: string) => string;
  readonly logger: Logger;
  /** Counts dead letters as they are sent. */
  readonly metrics: Metrics;
  /** The channel's receiver circuit, as this conversation sees it. */
  readonly receiver: ReceiverLink;
  readonly now: () => number;
  /**
   * Epoch ms after which no further job starts (the first always does): a hand-over runs the
   * lane in the consumer's request, which should not last for a whole backlog of slow brain
   * calls; the alarm takes the rest. Default: no limit but {@link MAX_JOBS_PER_RUN}.
   */
  readonly startUntil?: number;
}

/**
 * Runs the lane's due jobs, the head only, one after another. What each outcome means is the
 * core's {@link settleOutcome}; this carries the settlement out on the lane (its
 * {@link JobLedger}): finished, the next job runs; postponed, the head keeps its place until
 * its due time (to the millisecond) and every later job waits behind it; buried, the letter
 * goes to the dead-letter queue and the next job runs. Progress is saved in the lane after
 * each step, so the brain is never asked twice for one message. Returns when the head must
 * wait, the lane is empty, or {@link MAX_JOBS_PER_RUN} jobs ran; the caller sets the alarm.
 */
export async function runDueJobs(deps: LaneRunnerDeps): Promise<void> {
  const { lane, consumer, logger, now } = deps;
  let sent = true;
  const ledger: JobLedger = {
    finish: (job) => lane.finish(job.message.id, now()),
    postpone: (job, dueAt) => lane.save(job, dueAt),
    // Held for the receiver: the receiver object wakes the lane (`receiverWake`) before `until`.
    hold: (job, until) => lane.save(job, until),
    bury: async (letter) => {
      sent = await sendLetter(deps, letter.job, letterBody(deps, letter));
      if (sent) deps.metrics.deadLetter(letter.job.message.channel);
    },
  };
  for (let ran = 0; ran < MAX_JOBS_PER_RUN; ran += 1) {
    if (ran > 0 && deps.startUntil !== undefined && now() >= deps.startUntil) return;
    const head = lane.head();
    if (head === undefined || head.nextAt > now()) return;
    if (head.job === undefined) {
      logger.error("a stored job cannot be read: dropped", { message_id: head.id });
      lane.finish(head.id, now());
      continue;
    }
    if (head.letter !== undefined) {
      if (await sendLetter(deps, head.job, head.letter)) continue;
      return;
    }
    if (consumer === undefined) {
      logger.error("messages wait: the configuration is unusable (see the Worker's lines)", { message_id: head.id });
      lane.postpone(head.id, now() + BLOCKED_RETRY_MS);
      return;
    }
    const admission = deps.receiver.admit(head.job);
    const outcome = await consumer.run(head.job, (progress) => lane.save(progress), admission);
    const ruled = await deps.receiver.rule(outcome, admission, logger);
    const settlement = settleOutcome(ruled, { now: now(), replayHint: deps.replayHint });
    await writeSettlement(settlement, ledger, logger);
    if (settlement.kind === "postpone" || settlement.kind === "hold" || !sent) return;
  }
}

/** The dead letter as the queue carries it (JSON); a job too large to carry is parked for the consumer. */
function letterBody(deps: LaneRunnerDeps, letter: DeadLetter): string {
  const { job } = letter;
  const inline = fitsInline(job);
  if (!inline) deps.park(job);
  const body: DeadLetterBody = { deadLetter: { ...letter, job: inline ? job : { stored: jobKey(job) } } };
  return JSON.stringify(body);
}

/**
 * Sends a dead letter; once the queue has it the job leaves the lane and the next one may
 * run. Refused, the job stays at the head (nothing is lost, order is kept) and is sent again
 * after {@link BLOCKED_RETRY_MS}. True when sent.
 */
async function sendLetter(deps: LaneRunnerDeps, job: Job, letter: string): Promise<boolean> {
  const { lane, now, logger } = deps;
  try {
    await deps.deadLetters.send(JSON.parse(letter) as unknown, { contentType: "json" });
  } catch (error) {
    logger.error("the dead-letter queue refused a message: it stays first in its conversation and is sent again", {
      message_id: job.message.id,
      retry_in_ms: BLOCKED_RETRY_MS,
      error: errorMessage(error),
    });
    lane.holdLetter(job.message.id, letter, now() + BLOCKED_RETRY_MS);
    return false;
  }
  lane.finish(job.message.id, now());
  return true;
}
