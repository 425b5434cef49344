import type { JobOutcome } from "../lifecycle/job.js";
import {
  type Admission,
  type CircuitChange,
  type CircuitPolicy,
  type CircuitState,
  type PostReport,
  recordPost,
  releaseProbe,
} from "./receiver-circuit.js";

/** An outcome the circuit has ruled on: `unanswered` has become its verdict, or `wait`. */
export type CircuitOutcome = Exclude<JobOutcome, { kind: "unanswered" }>;

/** What a run's outcome is weighed against: its receiver's state, and what the run was admitted to do. */
export interface CircuitContext {
  readonly state: CircuitState;
  readonly policy: CircuitPolicy;
  /** What `admitPost` answered when the run started. */
  readonly admission: Admission;
  readonly now: number;
}

/** The ruling: the outcome to settle, the receiver's new state, and the change it made. */
export interface CircuitRuling {
  readonly outcome: CircuitOutcome;
  readonly state: CircuitState;
  readonly change?: CircuitChange;
}

/** What a run's outcome tells the circuit: its last reply POST, or undefined when it posted nothing. */
export function postReportOf(outcome: JobOutcome): PostReport | undefined {
  if (outcome.kind === "unanswered") {
    return {
      answered: false,
      ...(outcome.retryAfterMs === undefined ? {} : { retryAfterMs: outcome.retryAfterMs }),
      ...(outcome.answeredBefore === true ? { answeredBefore: true } : {}),
    };
  }
  if (outcome.kind === "wait" || outcome.kind === "fenced") return undefined;
  return outcome.answered === true ? { answered: true } : undefined;
}

/**
 * What an outcome comes to once its receiver's state is known: an unanswered POST is the job's
 * own failure (its verdict, an attempt spent) while the receiver is up, and holds the job at no
 * cost once it is down. Every other outcome stands.
 */
export function ruleOn(outcome: JobOutcome, receiverDown: boolean): CircuitOutcome {
  if (outcome.kind !== "unanswered") return outcome;
  return receiverDown ? { kind: "wait", job: outcome.job, until: outcome.until } : outcome.verdict;
}

/**
 * Weighs a run's outcome against its receiver's circuit: records its POST (or frees the probe
 * it did not use), then rules on it ({@link ruleOn}). Pure; the Node job queue keeps the state
 * in memory and calls this on every outcome; the Workers receiver object does the same two
 * steps in its storage.
 */
export function passCircuit(outcome: JobOutcome, context: CircuitContext): CircuitRuling {
  const wasProbe = context.admission === "probe";
  const report = postReportOf(outcome);
  if (report === undefined) {
    // Nothing was posted: a probe that did not post gives its turn to the next run.
    return { outcome: ruleOn(outcome, false), state: wasProbe ? releaseProbe(context.state) : context.state };
  }
  const step = recordPost(context.state, report, context.now, context.policy, wasProbe);
  const ruled = ruleOn(outcome, step.state.down !== undefined);
  return step.change === undefined
    ? { outcome: ruled, state: step.state }
    : { outcome: ruled, state: step.state, change: step.change };
}
