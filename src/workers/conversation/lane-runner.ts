import type { Consumer } from "../../core/consumer/create-consumer.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import { runHead } from "../../core/lifecycle/lane-runner.js";
import type { Logger } from "../../core/log/logger.js";
import { deadLetteredEvent } from "../../core/operator-events/operator-event.js";
import type { TimelineRecorder } from "../../core/timeline/timeline-recorder.js";
import type { BoundOperatorEvents } from "../object-operator-events.js";
import type { ReceiverLink } from "../receiver/receiver-link.js";
import type { ConversationLane } from "./conversation-lane.js";
import { BLOCKED_RETRY_MS, type DurableLaneStore } from "./durable-lane-store.js";

/**
 * Jobs one run takes at most; the next run (an alarm set for now) goes on with fresh budgets of
 * subrequests and CPU time. An alarm invocation may finish the run a hand-over left going before
 * it starts its own, so it runs at most twice this. Each job takes one subrequest per reply, plus
 * one for a brain that calls out, far below the 10,000 of an invocation.
 */
export const MAX_JOBS_PER_RUN = 50;

/** What running a conversation's lane needs. */
export interface LaneRunnerDeps {
  readonly lane: ConversationLane;
  readonly store: DurableLaneStore;
  /** The core consumer; undefined while the configuration is unusable (jobs then wait). */
  readonly consumer: Pick<Consumer, "run"> | undefined;
  /** What a dead letter's log line says about replaying it. */
  readonly replayHint: (id: string) => string;
  readonly logger: Logger;
  /** The channel's receiver circuit, as this conversation sees it. */
  readonly receiver: ReceiverLink;
  readonly now: () => number;
  /** Where each run's calls, POSTs and settlement are recorded; default nowhere. */
  readonly timeline?: TimelineRecorder | undefined;
  /** The object's operator events: dead letters are raised there, and settled after the run. */
  readonly operatorEvents?: BoundOperatorEvents | undefined;
}

/**
 * Runs the lane's due jobs, the head only, one after another, each with the core's
 * {@link runHead} over the object's lane store: finished or buried, the next job runs;
 * postponed or held, the head keeps its place until its due time (to the millisecond) and every
 * later job waits behind it. A head whose dead letter waits to be sent is sent first. Returns
 * when the head must wait, the lane is empty, or {@link MAX_JOBS_PER_RUN} jobs ran; the caller
 * sets the alarm. Operator events raised meanwhile (a dead letter, a brain's pause) are settled
 * after it: the object outlives their POSTs.
 */
export async function runDueJobs(deps: LaneRunnerDeps): Promise<void> {
  try {
    await runJobs(deps);
  } finally {
    deps.operatorEvents?.settle();
  }
}

async function runJobs(deps: LaneRunnerDeps): Promise<void> {
  const { lane, store, consumer, logger, now } = deps;
  const circuit = deps.receiver.client;
  for (let ran = 0; ran < MAX_JOBS_PER_RUN; ran += 1) {
    const head = lane.head();
    if (head === undefined || head.nextAt > now()) return;
    if (head.job === undefined) {
      logger.error("a stored job cannot be read: dropped", { message_id: head.id });
      lane.finish(head.id);
      continue;
    }
    if (head.letter !== undefined) {
      if (await store.sendLetter(head.id, head.letter, head.job.message.receivedAt)) continue;
      return;
    }
    if (consumer === undefined) {
      logger.error("messages wait: the configuration is unusable (see the Worker's lines)", { message_id: head.id });
      lane.postpone(head.id, now() + BLOCKED_RETRY_MS);
      return;
    }
    const { message } = head.job;
    const ticket = { key: conversationKey(message.channel, message.message.conversationId), epoch: store.epoch };
    const result = await runHead(ticket, head.job, {
      store,
      run: (job, hooks, admission) => consumer.run(job, hooks, admission),
      circuit,
      now,
      replayHint: deps.replayHint,
      logger,
      timeline: deps.timeline,
      buried: ({ letter, log }) => deps.operatorEvents?.emit(deadLetteredEvent(letter, log.fields)),
    });
    if (result.kind === "fenced") return;
    // The object's storage writes at once: a write that failed fails this invocation (an alarm is
    // tried again by the platform), rather than going unnoticed.
    await result.stored;
    const { kind } = result.settlement;
    if (kind === "postpone" || kind === "hold") return;
  }
}
