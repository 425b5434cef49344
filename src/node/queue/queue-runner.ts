import { errorMessage } from "../../core/channel-error.js";
import type { DeadLetter } from "../../core/dead-letters/dead-letter.js";
import { CrashQuarantine } from "../../core/lifecycle/crash-quarantine.js";
import type { Job, JobOutcome } from "../../core/lifecycle/job.js";
import {
  type HeadResult,
  type LaneRunnerDeps,
  runHead,
  settleRun,
  writeSettlement,
} from "../../core/lifecycle/lane-runner.js";
import { isLaneFenced, type LaneStore, type LaneTicket } from "../../core/lifecycle/lane-store.js";
import type { Settlement } from "../../core/lifecycle/settle-outcome.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { deadLetteredEvent } from "../../core/operator-events/operator-event.js";
import type { OperatorEvents } from "../../core/operator-events/operator-events.js";
import type { TimelineRecorder } from "../../core/timeline/timeline-recorder.js";
import type { LaneOwnership } from "./lane-ownership.js";
import type { LaneSchedule } from "./lane-schedule.js";
import type { NodeCircuit } from "./node-circuit.js";

/** What a run of the queue came to, as the progress log and the console count it. */
export type RunEvent = JobOutcome["kind"];

const SETTLED_EVENT: Readonly<Record<Settlement["kind"], RunEvent>> = {
  finish: "done",
  postpone: "retry",
  hold: "wait",
  bury: "dead",
};

/** What the queue's runner drives. */
export interface QueueRunnerOptions {
  readonly lanes: LaneSchedule;
  readonly store: LaneStore;
  readonly ownership: LaneOwnership;
  /** The channel's receiver circuit; without it every run posts. */
  readonly circuit: NodeCircuit | undefined;
  /** Runs a job's steps (the consumer, here or on the delivery thread). */
  readonly run: LaneRunnerDeps["run"];
  readonly concurrency: number;
  readonly now: () => number;
  readonly replayHint: (id: string) => string;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** Where each run's calls, POSTs and settlement are recorded. */
  readonly timeline: TimelineRecorder;
  readonly onEvent: (event: RunEvent) => void;
  readonly onDeadLetter: (letter: DeadLetter) => unknown;
  /** Where each stored dead letter is raised (`message.dead_lettered`). */
  readonly operatorEvents: OperatorEvents;
  /** A store write failed (its message), or succeeded again (undefined). */
  readonly onStoreResult: (error: string | undefined) => void;
}

/** The run slots of a queue: which heads start, and what their runs' ends do to the lanes. */
export interface QueueRunner {
  /** Starts what may start now. */
  pump(): void;
  /** Dead letters made since the queue started. */
  readonly deadLetters: number;
}

/**
 * The Node scheduler of a channel's lanes: up to `concurrency` heads run at once (each of another
 * conversation), a suspect of the {@link CrashQuarantine} alone, and each run is the core's
 * {@link runHead} under the lane's ticket. What an outcome means is decided there; this only
 * carries the settlement out on the in-memory lanes (a timer for a retry, the receiver gate for a
 * hold, the next head for a finish or a burial) and lets go of a lane whose write was fenced.
 *
 * A lane runs one job at a time here even when it was dropped while its run went on and read
 * again meanwhile: the copy read again waits for that run to end. A run that ends under a claim
 * this process no longer holds changes nothing in memory, since what it wrote is in the store
 * and what it wrote after the newer claim was refused there: the lane is read again instead.
 */
export function createQueueRunner(options: QueueRunnerOptions): QueueRunner {
  const { lanes, store, ownership, circuit, logger, now } = options;
  const quarantine = new CrashQuarantine();
  /** Lanes with a run under way, whether or not the lanes still hold its job. */
  const active = new Set<string>();
  let running = 0;
  let deadLetters = 0;

  const deps: Omit<LaneRunnerDeps, "run"> = {
    store,
    circuit: circuit?.client,
    now,
    replayHint: options.replayHint,
    logger,
    timeline: options.timeline,
    buried: ({ letter, log }) => options.operatorEvents.emit(deadLetteredEvent(letter, log.fields)),
  };

  /** Another runner claimed the lane: its jobs here are no longer this process's to run. */
  const letGo = (key: string, job: Job): void => {
    const dropped = lanes.drop(key);
    ownership.lost(key);
    logger.warn("a conversation was claimed by another runner: this run stops and posts nothing more", {
      channel: job.message.channel,
      conversation_id: job.message.message.conversationId,
      message_id: job.message.id,
      dropped,
    });
  };

  /** A settlement write nothing waits for: a failure leaves the job as last stored. */
  const watch = (key: string, ticket: LaneTicket, settlement: Settlement, stored: Promise<void> | undefined): void => {
    const { job } = settlement;
    if (stored === undefined) {
      options.onStoreResult(undefined);
      return;
    }
    stored.then(
      () => options.onStoreResult(undefined),
      (error: unknown) => {
        if (isLaneFenced(error)) {
          const current = ownership.ticket(key);
          if (current === undefined || current.epoch === ticket.epoch) letGo(key, job);
          // Refused by this process's own newer claim: a finished job is not read again (it
          // finished here), so its delete is made under that claim.
          else if (settlement.kind === "finish")
            watch(key, current, settlement, writeSettlement(current, settlement, store));
          return;
        }
        options.onStoreResult(errorMessage(error));
        logger.error(`cannot record a job's outcome: ${errorMessage(error)}`, { message_id: job.message.id });
      },
    );
  };

  const buried = (letter: DeadLetter): void => {
    deadLetters += 1;
    options.metrics.deadLetter(letter.job.message.channel);
    // The letter is stored (or, in memory, logged): a hook that fails must not put the job back.
    const cannotKeep = (error: unknown): void => {
      logger.error(`cannot keep a dead letter within its channel's bound: ${errorMessage(error)}`, {
        message_id: letter.job.message.id,
      });
    };
    try {
      const kept = options.onDeadLetter(letter);
      if (kept instanceof Promise) kept.catch(cannotKeep);
    } catch (error) {
      cannotKeep(error);
    }
  };

  /**
   * The end of a run under `ticket`: applied when the lane's ticket is still that one; otherwise
   * the lane was let go, or claimed again here since, and what it holds is dropped (see above).
   */
  const ended = (key: string, ticket: LaneTicket, result: HeadResult): void => {
    const current = ownership.ticket(key);
    if (current !== undefined && current.epoch === ticket.epoch) {
      apply(key, ticket, result);
      return;
    }
    if (result.kind === "settled") {
      result.stored?.catch(() => undefined);
      // A burial is settled once stored: its letter is kept whatever the lane holds now.
      if (result.settlement.kind === "bury") buried(result.settlement.letter);
    }
    const job = result.kind === "fenced" ? result.job : result.settlement.job;
    if (current === undefined) {
      if (result.kind === "fenced") letGo(key, job);
      else lanes.drop(key);
      return;
    }
    const dropped = lanes.drop(key);
    if (result.kind === "settled" && result.settlement.kind === "finish") {
      // Each write of a finished run was committed before the newer claim (one after it would
      // have been refused), and its replies were posted: it is not run again, and its delete is
      // made under that claim.
      lanes.finishedHere(job);
      watch(key, current, result.settlement, writeSettlement(current, result.settlement, store));
    }
    logger.info("a run under an earlier claim of its conversation ended: the conversation is read again", {
      channel: job.message.channel,
      conversation_id: job.message.message.conversationId,
      message_id: job.message.id,
      dropped,
    });
    ownership.reread(key, job.message.channel);
  };

  const apply = (key: string, ticket: LaneTicket, result: HeadResult): void => {
    if (result.kind === "fenced") {
      letGo(key, result.job);
      return;
    }
    const { settlement } = result;
    // Only a job still at the head of its lane is moved: one a fenced write let go of is gone,
    // and its own write (fenced too, most likely) changes nothing here, but must not go unwatched.
    if (!lanes.isHead(settlement.job)) {
      result.stored?.catch(() => undefined);
      return;
    }
    switch (settlement.kind) {
      case "finish":
        lanes.leave(settlement.job);
        break;
      case "postpone":
        lanes.postpone(settlement.job, settlement.dueAt);
        break;
      case "hold":
        // The circuit holds the lane, and wakes it once the receiver is up (or as its probe).
        lanes.postpone(settlement.job, settlement.until);
        break;
      case "bury":
        buried(settlement.letter);
        lanes.leave(settlement.job);
        // Stored already: a replay of the letter may run again.
        lanes.forgetFinished(settlement.job.message.id);
        break;
    }
    options.onEvent(SETTLED_EVENT[settlement.kind]);
    watch(key, ticket, settlement, result.stored);
    if (settlement.kind === "finish" || settlement.kind === "bury") {
      if (lanes.head(key) === undefined) ownership.released(key, settlement.job.message.channel, result.stored);
    }
  };

  /** A run that rejected (the delivery thread stopped mid-run): the quarantine rules, the lane settles. */
  const failedUnexpectedly = async (key: string, ticket: LaneTicket, job: Job, error: unknown): Promise<void> => {
    const outcome = quarantine.outcome(job, errorMessage(error), lanes.isStopped, logger);
    ended(key, ticket, await settleRun(ticket, outcome, deps));
  };

  const start = (key: string, job: Job, suspect: boolean): void => {
    const ticket = ownership.ticket(key);
    if (ticket === undefined) {
      lanes.drop(key);
      return;
    }
    running += 1;
    active.add(key);
    quarantine.started(suspect);
    circuit?.started(key);
    const run: LaneRunnerDeps["run"] = (next, hooks, admission) =>
      options.run(
        next,
        {
          firstSequence: hooks.firstSequence,
          // The head in memory follows each step, so that a run that dies resumes from it.
          save: (progress, answered) => {
            lanes.progress(key, progress);
            return hooks.save(progress, answered);
          },
          record: hooks.record,
          receiverDown: hooks.receiverDown,
        },
        admission,
      );
    runHead(ticket, job, { ...deps, run })
      .then(
        (result) => {
          if (suspect) quarantine.cleared(job.message.id);
          ended(key, ticket, result);
        },
        (error: unknown) => failedUnexpectedly(key, ticket, lanes.isHead(job) ? (lanes.head(key) ?? job) : job, error),
      )
      .catch((error: unknown) => {
        logger.error(`cannot settle a job: ${errorMessage(error)}`, { message_id: job.message.id });
      })
      .finally(() => {
        active.delete(key);
        running -= 1;
        quarantine.ended(suspect);
        pump();
      })
      .catch(() => undefined);
  };

  const mayStart = (job: Job, key: string): boolean =>
    !active.has(key) && quarantine.mayStart(quarantine.isSuspect(job.message.id));

  function pump(): void {
    if (lanes.isStopped || running >= options.concurrency || !ownership.mayRun()) return;
    for (const { key, job } of lanes.startable(mayStart)) {
      start(key, job, quarantine.isSuspect(job.message.id));
      if (running >= options.concurrency) return;
    }
  }

  return {
    pump,
    get deadLetters() {
      return deadLetters;
    },
  };
}
