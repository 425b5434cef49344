import { errorMessage } from "../../core/channel-error.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import type { Job, JobOutcome } from "../../core/lifecycle/job.js";
import type { Logger } from "../../core/log/logger.js";
import { type CircuitOutcome, postReportOf, ruleOn } from "../../core/receiver/pass-circuit.js";
import type { Admission } from "../../core/receiver/receiver-circuit.js";
import type { WorkerEnv } from "../worker-env.js";
import { learnReceiver, receiverView } from "./receiver-views.js";

/** Wait before a held job runs again when the receiver object could not be reached. */
export const UNREACHABLE_RETRY_MS = 5_000;

/**
 * A conversation object's side of its channel's receiver circuit: what a run may post (from
 * the isolate's view, or the probe the receiver object granted), and the ruling on its outcome,
 * asking the receiver object only when something is wrong. The verdicts are the core's
 * (`ruleOn`); the state is the receiver object's.
 */
export class ReceiverLink {
  private probeGranted = false;

  /** `receivers` is asked at each report: the object answers from the environment it is handed. */
  constructor(private readonly receivers: () => WorkerEnv["RECEIVERS"]) {}

  /** The receiver object woke this conversation as its probe: the next run posts. */
  grantProbe(): void {
    this.probeGranted = true;
  }

  /** What the run of `job` may do with its replies. */
  admit(job: Job): Admission {
    if (this.probeGranted) {
      this.probeGranted = false;
      return "probe";
    }
    return receiverView(job.message.channel).down ? "wait" : "send";
  }

  /**
   * Rules on a run's outcome. A healthy receiver that answered costs no request; a POST
   * unanswered, a success while failures are counted, a probe's result or replies to hold are
   * reported, and the answer rules (and refreshes the isolate's view).
   */
  async rule(outcome: JobOutcome, admission: Admission, logger: Logger): Promise<CircuitOutcome> {
    const { channel } = outcome.job.message;
    const report = postReportOf(outcome);
    const view = receiverView(channel);
    const wasProbe = admission === "probe";
    const holds = outcome.kind === "wait" || outcome.kind === "unanswered";
    // Held until its max age by this isolate's view: asked before it becomes a dead letter,
    // since the view may be out of date.
    const expiring = admission === "wait" && outcome.kind === "dead";
    const worthTelling =
      holds ||
      expiring ||
      wasProbe ||
      report?.answered === false ||
      (report?.answered === true && (view.down || view.failing));
    if (!worthTelling) return ruleOn(outcome, false);
    const holdAs = holds ? conversationKey(channel, outcome.job.message.message.conversationId) : null;
    try {
      const receivers = this.receivers();
      const stub = receivers.get(receivers.idFromName(channel));
      const answer = await stub.report(channel, report ?? null, wasProbe, holdAs);
      learnReceiver(channel, answer);
      // The view was out of date: the receiver is up, so the held job runs again now.
      if ((outcome.kind === "wait" || expiring) && !answer.down) return { kind: "retry", job: outcome.job, delayMs: 0 };
      return ruleOn(outcome, answer.down);
    } catch (error) {
      logger.warn(`cannot reach the receiver circuit: ${errorMessage(error)}`, { channel });
      if (outcome.kind === "wait") return { kind: "retry", job: outcome.job, delayMs: UNREACHABLE_RETRY_MS };
      return ruleOn(outcome, false);
    }
  }

  /** The receiver is up again (the receiver object says so): the isolate's view follows. */
  static up(channel: string): void {
    learnReceiver(channel, { down: false, failing: false });
  }
}
