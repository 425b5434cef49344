/**
 * The receiver circuit: the state of one channel's receiver (its `outbound_url`) as every
 * conversation of the channel shares it. Pure functions over plain JSON, so that the Node job
 * queue keeps the state in memory and a Durable Object in its storage, and both decide alike.
 *
 * Up, every conversation posts. After `failuresToOpen` reply POSTs in a row that the receiver
 * did not answer (no connection, a timeout, 5xx, 408, 425, 429) it is down: conversations
 * hold their replies, spending no attempts, and one probe at a time posts a waiting reply on
 * the retry schedule (a `Retry-After` sets the time of the next probe). The first answer
 * brings it back up.
 */

/** What the circuit of a channel is built from (`webhook.delivery`). */
export interface CircuitPolicy {
  /** Unanswered POSTs in a row that take the receiver down; 0 never does. */
  readonly failuresToOpen: number;
  /** The first probe's wait, doubling after each failed probe. */
  readonly initialDelayMs: number;
  /** The longest wait between probes, and the cap on an honoured `Retry-After`. */
  readonly maxDelayMs: number;
  /** A probe whose result never came (its runner died) is given up after this; another may start. */
  readonly probeTimeoutMs: number;
  /** The receiver: its `outbound_url`'s origin. A circuit kept for another one starts afresh. */
  readonly target: string;
}

/** Shortest wait between probes: an `initial_delay_ms` of 0 must not make a busy loop of them. */
export const MIN_PROBE_DELAY_MS = 100;

/** A receiver that is down. */
export interface DownState {
  /** Epoch ms when it went down. */
  readonly since: number;
  /** Epoch ms from which the next probe may start. */
  readonly probeAt: number;
  /** Probes that failed since it went down: the schedule's exponent. */
  readonly probes: number;
  /** Set while a probe is out: epoch ms after which it is given up. */
  readonly probingUntil?: number;
}

/**
 * A receiver's state: unanswered POSTs in a row while up, and `down` while it is down, for the
 * receiver `target` (the policy's when a failure was last counted).
 */
export interface CircuitState {
  readonly failures: number;
  readonly down?: DownState;
  readonly target?: string;
}

/** A receiver nothing is known against. */
export const RECEIVER_UP: CircuitState = { failures: 0 };

/**
 * What a run may do with its replies: post them (`send`), post one as the probe of a receiver
 * that is down (`probe`), or hold them (`wait`).
 */
export type Admission = "send" | "probe" | "wait";

/**
 * What a run's last reply POST came to, as the circuit counts it; `answeredBefore` when it went
 * unanswered after an earlier POST of the same run was answered (a message of several replies).
 */
export type PostReport =
  | { readonly answered: true }
  | { readonly answered: false; readonly retryAfterMs?: number; readonly answeredBefore?: true };

/** A state change the runtime reports (metrics, a log line) and acts on (waking the waiting). */
export type CircuitChange = "down" | "up";

/** A new state, and the change it made, if any. */
export interface CircuitStep {
  readonly state: CircuitState;
  readonly change?: CircuitChange;
}

/**
 * May a run post now? Up: yes. Down: one run becomes the probe when its time has come and no
 * other probe is out; every other run waits. `hasReplies` false (the run must ask its brain
 * first) never takes the probe: a probe is a POST about to be made, not a brain call.
 */
export function admitPost(
  state: CircuitState,
  now: number,
  policy: CircuitPolicy,
  hasReplies = true,
): { readonly state: CircuitState; readonly admission: Admission } {
  const { down } = state;
  if (down === undefined) return { state, admission: "send" };
  const probing = down.probingUntil !== undefined && now < down.probingUntil;
  if (!hasReplies || probing || now < down.probeAt) return { state, admission: "wait" };
  return { state: { ...state, down: { ...down, probingUntil: now + policy.probeTimeoutMs } }, admission: "probe" };
}

/**
 * Counts a run's last reply POST. Answered (any status but those above): the receiver is up.
 * Unanswered while up: one more in a row, and down at `failuresToOpen`. Unanswered by the
 * probe: the next probe is scheduled. An unanswered POST of a run admitted before the receiver
 * went down changes nothing more.
 */
export function recordPost(
  state: CircuitState,
  report: PostReport,
  now: number,
  policy: CircuitPolicy,
  wasProbe: boolean,
): CircuitStep {
  if (report.answered) {
    if (state.down !== undefined) return { state: RECEIVER_UP, change: "up" };
    return { state: state.failures === 0 ? state : RECEIVER_UP };
  }
  if (report.answeredBefore === true) {
    // The answer came first: it ends the row (or the outage), and this failure starts a new one.
    const answered = recordPost(state, { answered: true }, now, policy, wasProbe);
    const failure = report.retryAfterMs === undefined ? {} : { retryAfterMs: report.retryAfterMs };
    const failed = recordPost(answered.state, { answered: false, ...failure }, now, policy, false);
    // Up and down again in one run (a row of one): still down, under a new outage, no change to tell.
    if (answered.change !== undefined && failed.change !== undefined) return { state: failed.state };
    const change = failed.change ?? answered.change;
    return change === undefined ? { state: failed.state } : { state: failed.state, change };
  }
  const { down } = state;
  if (down !== undefined) {
    if (!wasProbe) return { state };
    const probes = down.probes + 1;
    const probeAt = now + probeDelayMs(probes, policy, report.retryAfterMs);
    return { state: { ...state, down: { since: down.since, probes, probeAt } } };
  }
  const failures = state.failures + 1;
  const { target } = policy;
  if (policy.failuresToOpen === 0 || failures < policy.failuresToOpen) return { state: { failures, target } };
  return {
    state: {
      failures,
      target,
      down: { since: now, probes: 0, probeAt: now + probeDelayMs(0, policy, report.retryAfterMs) },
    },
    change: "down",
  };
}

/**
 * The state as it stands under `policy`, which a reload may have changed: a circuit counted
 * against another receiver (`outbound_url` names another origin now), or one that is off now
 * (`failuresToOpen` 0), starts afresh, up. Runtimes call it before {@link admitPost} and
 * {@link recordPost}.
 */
export function underPolicy(state: CircuitState, policy: CircuitPolicy): CircuitStep {
  const retargeted = state.target !== undefined && state.target !== policy.target;
  const off = policy.failuresToOpen === 0 && state.failures > 0;
  if (!retargeted && !off) return { state };
  return state.down === undefined ? { state: RECEIVER_UP } : { state: RECEIVER_UP, change: "up" };
}

/**
 * The lane granted the probe could not be reached (its runtime's object did not answer): the
 * probe is free again, from the next probe's time on, as after a failed probe but not counted
 * as one, so that a lane that stays unreachable costs one try per probe, not a loop.
 */
export function deferProbe(state: CircuitState, now: number, policy: CircuitPolicy): CircuitState {
  const { down } = state;
  if (down === undefined) return state;
  return {
    ...state,
    down: { since: down.since, probes: down.probes, probeAt: now + probeDelayMs(down.probes, policy) },
  };
}

/** A probe's run ended without posting (it failed before, or had nothing to post): the next run may probe. */
export function releaseProbe(state: CircuitState): CircuitState {
  const { down } = state;
  if (down?.probingUntil === undefined) return state;
  return { ...state, down: { since: down.since, probes: down.probes, probeAt: down.probeAt } };
}

/**
 * The wait before the next probe after `failedProbes` failed ones: the retry schedule's
 * ceiling (no jitter: there is one probe, not a crowd to spread), or the receiver's
 * `Retry-After` when it sent one; capped at `maxDelayMs`.
 */
export function probeDelayMs(failedProbes: number, policy: CircuitPolicy, retryAfterMs?: number): number {
  const scheduled = retryAfterMs ?? policy.initialDelayMs * 2 ** Math.min(failedProbes, 52);
  return Math.max(MIN_PROBE_DELAY_MS, Math.min(policy.maxDelayMs, scheduled));
}

/** The circuit policy of a channel's `webhook` settings: its `outbound_url` and `delivery`. */
export function circuitPolicyOf(webhook: {
  readonly outbound_url: string;
  readonly delivery: {
    readonly circuit_failures: number;
    readonly initial_delay_ms: number;
    readonly max_delay_ms: number;
    readonly timeout_ms: number;
  };
}): CircuitPolicy {
  const { delivery } = webhook;
  return {
    target: URL.canParse(webhook.outbound_url) ? new URL(webhook.outbound_url).origin : webhook.outbound_url,
    failuresToOpen: delivery.circuit_failures,
    initialDelayMs: delivery.initial_delay_ms,
    maxDelayMs: delivery.max_delay_ms,
    // A probe is a POST about to be made: two of its time limits, and some slack, cover it.
    probeTimeoutMs: 2 * delivery.timeout_ms + 5_000,
  };
}
