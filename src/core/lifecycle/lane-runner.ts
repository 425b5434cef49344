import { errorMessage } from "../channel-error.js";
import type { RunHooks } from "../consumer/create-consumer.js";
import type { Logger } from "../log/logger.js";
import type { CircuitOutcome } from "../receiver/pass-circuit.js";
import type { Admission } from "../receiver/receiver-circuit.js";
import { settlementEvent } from "../timeline/settlement-events.js";
import type { RunEvent, TimelineEvent } from "../timeline/timeline-event.js";
import { subjectOf, type TimelineRecorder } from "../timeline/timeline-recorder.js";
import type { Job, JobOutcome } from "./job.js";
import { isLaneFenced, type LaneStore, type LaneTicket } from "./lane-store.js";
import { type Settlement, settleOutcome, unstoredSettlement } from "./settle-outcome.js";

/** The receiver circuit as one run sees it: what it may post, and the ruling on what it did. */
export interface LaneCircuit {
  /** What the run of `job` may do with its replies (see `admitPost`). */
  admit(job: Job): Admission;
  /**
   * Rules on the run's outcome (see `passCircuit`); `key` is the lane, held for the receiver when
   * the ruling is to wait.
   */
  rule(outcome: JobOutcome, admission: Admission, key: string): CircuitOutcome | Promise<CircuitOutcome>;
  /**
   * The probe's run had a POST answered with more of its replies still to post: the receiver is
   * up, told now so that the lanes it held need not wait out the rest of the run (nor its time
   * limit, after which another probe could start). Resolves whether the circuit heard it.
   */
  probeAnswered(job: Job): Promise<boolean>;
  /** Whether `job`'s receiver is down, as this runtime last heard (see `RunHooks.receiverDown`). */
  isDown(job: Job): boolean;
}

/** What running a lane's head needs: each runtime brings its own parts. */
export interface LaneRunnerDeps {
  readonly store: LaneStore;
  /** Runs a job's steps (the core consumer's `run`, in this thread or on the delivery thread). */
  readonly run: (job: Job, hooks: RunHooks, admission: Admission) => Promise<JobOutcome>;
  /** The channel's receiver circuit; without it every run posts. */
  readonly circuit?: LaneCircuit | undefined;
  readonly now: () => number;
  /** What a dead letter's log line says about replaying it. */
  readonly replayHint: (id: string) => string;
  readonly logger: Logger;
  /** Where each run's calls, POSTs and settlement are recorded; default nowhere. */
  readonly timeline?: TimelineRecorder | undefined;
  /** Told of each dead letter once its burial is stored (operator events); must not throw. */
  readonly buried?: ((settlement: Extract<Settlement, { kind: "bury" }>) => void) | undefined;
}

/**
 * How a head's run ended, for the runtime that schedules the lane:
 * - `settled`: what becomes of the job ({@link Settlement}). A burial is stored (or, failing that,
 *   the settlement is the unstored retry); the other writes are under way in `stored`, which the
 *   runtime watches (a rejection leaves the job as last stored; `lane_fenced` means the lane is
 *   another runner's now);
 * - `fenced`: the lane refused a write: another runner claimed the conversation. The runtime lets
 *   go of the lane; nothing of this run is settled.
 */
export type HeadResult =
  | { readonly kind: "settled"; readonly settlement: Settlement; readonly stored: Promise<void> | undefined }
  | { readonly kind: "fenced"; readonly job: Job };

/**
 * Runs the head job of a lane once, the one loop of a job's life on every runtime and backend:
 * numbers come from the lane (its last `sequence`, read only when the job has replies to number),
 * the steps run with each stored under `ticket` before anything that depends on it is posted, the
 * receiver circuit rules on the outcome, {@link settleOutcome} decides what it means, and the
 * settlement is written under `ticket`. A dead letter's line is logged once its burial is stored.
 * A lane whose last number cannot be read, or whose burial cannot be stored, gets the unstored
 * retry, and the job runs again from what the store holds. Rejects only when `deps.run` does (the
 * delivery thread stopped mid-run): the runtime's crash quarantine takes it from there.
 */
export async function runHead(ticket: LaneTicket, job: Job, deps: LaneRunnerDeps): Promise<HeadResult> {
  const { store, logger } = deps;
  let firstSequence = 0;
  if (job.replies === undefined || job.renumber === true) {
    try {
      firstSequence = (await store.lastSequence(ticket)) + 1;
    } catch (error) {
      if (isLaneFenced(error)) return { kind: "fenced", job };
      logger.error(`cannot read the conversation's last reply number: ${errorMessage(error)}`, fieldsOf(job));
      return { kind: "settled", settlement: unstoredSettlement(job, deps.now()), stored: undefined };
    }
  }
  const { circuit } = deps;
  const admission = circuit?.admit(job) ?? "send";
  // The settlement's event joins these when the run ends: they are recorded as one list.
  const runEvents: TimelineEvent[] = [];
  // A save that counts more replies delivered than the job held comes after an answered POST.
  const deliveredBefore = job.replies === undefined ? 0 : job.delivered;
  let probeTold: Promise<boolean> | undefined;
  const hooks: RunHooks = {
    firstSequence,
    save: (next, answered) => {
      if (admission === "probe" && probeTold === undefined && next.delivered > deliveredBefore)
        probeTold = circuit?.probeAnswered(next);
      return store.save(ticket, next, answered);
    },
    ...(deps.timeline?.on === true ? { record: (events: readonly RunEvent[]) => runEvents.push(...events) } : {}),
    ...(circuit !== undefined && admission === "send" ? { receiverDown: () => circuit.isDown(job) } : {}),
  };
  const outcome = await deps.run(job, hooks, admission);
  // Told mid-run, the probe's work is done: the rest of the run is ruled on as one that sent.
  const ruledAs = probeTold !== undefined && (await probeTold) ? "send" : admission;
  // A fenced run posted nothing since its refused write: the circuit frees a probe it held.
  const ruled = circuit === undefined ? outcome : await circuit.rule(outcome, ruledAs, ticket.key);
  return settleRun(ticket, ruled, deps, runEvents);
}

/**
 * The end of a run: {@link settleOutcome} decides what `outcome` means and the settlement is
 * written under `ticket` (see {@link runHead}). A runtime calls it alone for a run that never
 * returned an outcome (the delivery thread died with it), with the verdict of its quarantine.
 * `runEvents`, what the run recorded, is taken over: the settlement's event is appended to it.
 */
export async function settleRun(
  ticket: LaneTicket,
  outcome: JobOutcome,
  deps: Omit<LaneRunnerDeps, "run" | "circuit">,
  runEvents: TimelineEvent[] = [],
): Promise<HeadResult> {
  const result = await settle(ticket, outcome, deps);
  const { timeline } = deps;
  if (timeline?.on === true) {
    const job = result.kind === "fenced" ? result.job : result.settlement.job;
    if (result.kind === "fenced") {
      if (runEvents.length > 0) timeline.record(subjectOf(job.message), runEvents, null);
    } else {
      const { event, status } = settlementEvent(result.settlement, runEvents, deps.now());
      runEvents.push(event);
      timeline.record(subjectOf(job.message), runEvents, status);
    }
  }
  return result;
}

async function settle(
  ticket: LaneTicket,
  outcome: JobOutcome,
  deps: Omit<LaneRunnerDeps, "run" | "circuit">,
): Promise<HeadResult> {
  const { store, logger } = deps;
  if (outcome.kind === "fenced") return { kind: "fenced", job: outcome.job };
  const settlement = settleOutcome(outcome, { now: deps.now(), replayHint: deps.replayHint });
  if (settlement.kind !== "bury")
    return { kind: "settled", settlement, stored: writeSettlement(ticket, settlement, store) };
  try {
    await store.bury(ticket, settlement.letter);
  } catch (error) {
    if (isLaneFenced(error)) return { kind: "fenced", job: settlement.job };
    // The job stays as last stored and runs again: its next death is buried then.
    logger.error(`cannot store a dead letter: ${errorMessage(error)}`, fieldsOf(settlement.job));
    return { kind: "settled", settlement: unstoredSettlement(settlement.job, deps.now()), stored: undefined };
  }
  const { level, msg, fields } = settlement.log;
  logger[level](msg, fields);
  if (logger.enabled("debug")) logger.debug("dead letter in full", { letter: settlement.letter });
  deps.buried?.(settlement);
  return { kind: "settled", settlement, stored: undefined };
}

/** The write of a settlement other than a burial. */
function write(
  ticket: LaneTicket,
  settlement: Exclude<Settlement, { kind: "bury" }>,
  store: LaneStore,
): void | Promise<void> {
  switch (settlement.kind) {
    case "finish":
      return store.finish(ticket, settlement.job);
    case "postpone":
      return store.postpone(ticket, settlement.job, settlement.dueAt);
    case "hold":
      return store.hold(ticket, settlement.job, settlement.until);
  }
}

/**
 * A settlement's write (other than a burial) under `ticket`, as a promise, or undefined for one
 * made at once; one that throws rejects. A runtime calls it alone to make a finished job's delete
 * again under a newer claim of its lane.
 */
export function writeSettlement(
  ticket: LaneTicket,
  settlement: Exclude<Settlement, { kind: "bury" }>,
  store: LaneStore,
): Promise<void> | undefined {
  try {
    const made = write(ticket, settlement, store);
    return made instanceof Promise ? made : undefined;
  } catch (error) {
    return Promise.reject(error);
  }
}

function fieldsOf(job: Job): Readonly<Record<string, string | undefined>> {
  return {
    message_id: job.message.id,
    channel: job.message.channel,
    conversation_id: job.message.message.conversationId,
  };
}
