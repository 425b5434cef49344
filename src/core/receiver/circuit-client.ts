import { errorMessage } from "../channel-error.js";
import { conversationKey } from "../conversation/conversation-store.js";
import type { Job, JobOutcome } from "../lifecycle/job.js";
import type { LaneCircuit } from "../lifecycle/lane-runner.js";
import type { Logger } from "../log/logger.js";
import type { CircuitView } from "./circuit-keeper.js";
import { type CircuitOutcome, postReportOf, ruleOn } from "./pass-circuit.js";
import type { Admission, PostReport } from "./receiver-circuit.js";

/** Wait before a held job runs again when the circuit could not be asked. */
export const UNREACHABLE_RETRY_MS = 5_000;

/** What a run's side of the circuit needs: the view it has, and the keeper to report to. */
export interface CircuitClientDeps {
  /** How the channel's receiver stands, as this runtime last learned it. */
  readonly view: (channel: string) => CircuitView;
  /** The keeper's `record`, here or across a request (Workers: the receiver object). */
  readonly record: (
    channel: string,
    report: PostReport | null,
    wasProbe: boolean,
    holdAs: string | null,
  ) => CircuitView | Promise<CircuitView>;
  /** Takes the probe the keeper granted lane `key`, if it did. */
  readonly takeProbe: (key: string) => boolean;
  /** Where a keeper that cannot be asked is reported. */
  readonly logger: () => Logger;
}

/**
 * The receiver circuit as one run sees it, on every runtime: what it may post, from the view it
 * has (the probe the keeper granted its lane; wait while the receiver is down; send otherwise),
 * and the ruling on what it did (`ruleOn`). A healthy receiver that answered costs nothing; an
 * unanswered POST, an answer while failures are counted, a probe's result or replies to hold are
 * reported to the keeper, whose answer rules.
 */
export class CircuitClient implements LaneCircuit {
  constructor(private readonly deps: CircuitClientDeps) {}

  admit(job: Job): Admission {
    if (this.deps.takeProbe(keyOf(job))) return "probe";
    return this.deps.view(job.message.channel).down ? "wait" : "send";
  }

  rule(outcome: JobOutcome, admission: Admission, key: string): CircuitOutcome | Promise<CircuitOutcome> {
    const { channel } = outcome.job.message;
    const report = postReportOf(outcome);
    const view = this.deps.view(channel);
    const wasProbe = admission === "probe";
    const holds = outcome.kind === "wait" || outcome.kind === "unanswered";
    // Held until its max age by this view: asked before it becomes a dead letter, since the view
    // may be out of date.
    const expiring = admission === "wait" && outcome.kind === "dead";
    const worthTelling =
      holds ||
      expiring ||
      wasProbe ||
      report?.answered === false ||
      (report?.answered === true && (view.down || view.failing));
    if (!worthTelling) return ruleOn(outcome, false);
    return this.told(outcome, report ?? null, wasProbe, holds ? key : null, expiring);
  }

  isDown(job: Job): boolean {
    return this.deps.view(job.message.channel).down;
  }

  async probeAnswered(job: Job): Promise<boolean> {
    const { channel } = job.message;
    try {
      await this.deps.record(channel, { answered: true }, true, null);
      return true;
    } catch (error) {
      this.deps.logger().warn(`cannot reach the receiver circuit: ${errorMessage(error)}`, { channel });
      return false;
    }
  }

  private async told(
    outcome: JobOutcome,
    report: PostReport | null,
    wasProbe: boolean,
    holdAs: string | null,
    expiring: boolean,
  ): Promise<CircuitOutcome> {
    const { channel } = outcome.job.message;
    try {
      const answer = await this.deps.record(channel, report, wasProbe, holdAs);
      // The view was out of date: the receiver is up, so the held job runs again now.
      if ((outcome.kind === "wait" || expiring) && !answer.down) return { kind: "retry", job: outcome.job, delayMs: 0 };
      return ruleOn(outcome, answer.down);
    } catch (error) {
      this.deps.logger().warn(`cannot reach the receiver circuit: ${errorMessage(error)}`, { channel });
      if (outcome.kind === "wait") return { kind: "retry", job: outcome.job, delayMs: UNREACHABLE_RETRY_MS };
      return ruleOn(outcome, false);
    }
  }
}

function keyOf(job: Job): string {
  return conversationKey(job.message.channel, job.message.message.conversationId);
}
