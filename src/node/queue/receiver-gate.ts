import type { Job, JobOutcome } from "../../core/lifecycle/job.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { type CircuitOutcome, passCircuit } from "../../core/receiver/pass-circuit.js";
import {
  type Admission,
  admitPost,
  type CircuitPolicy,
  type CircuitState,
  RECEIVER_UP,
  underPolicy,
} from "../../core/receiver/receiver-circuit.js";
import type { ReceiverStanding } from "../../core/receiver/receiver-standing.js";

/** What a channel's receiver gate needs. */
export interface ReceiverGateOptions {
  readonly channel: string;
  /** Asked at each decision, so that a reload of `webhook.delivery` reaches the circuit at once. */
  readonly policy: () => CircuitPolicy;
  readonly now: () => number;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /**
   * Makes the held lanes `keys` ready to run now, in the order given. Called with every held
   * lane when the receiver comes back up, and with the first one when a probe is due.
   */
  readonly wake: (keys: readonly string[]) => void;
  /** Messages of the channel not yet finished: what an operator reads as "waiting" when it goes down. */
  readonly pending: () => number;
}

/** How a channel's receiver stands, for `/readyz`, with the channel's name. */
export interface ReceiverView extends ReceiverStanding {
  readonly channel: string;
}

/**
 * The Node side of one channel's receiver circuit (the core's `receiver-circuit.ts`): the state
 * in memory, the lanes held for it in the order they began to wait, and the probe's timer. The
 * job queue asks it before each run ({@link admit}) and passes each outcome through it
 * ({@link rule}); it wakes held lanes, all of them when the receiver is up again, one when a
 * probe is due.
 */
export class ReceiverGate {
  private state: CircuitState = RECEIVER_UP;
  /** Held lanes, by key; a Set keeps the order they began to wait in. */
  private readonly held = new Set<string>();
  private probeTimer: ReturnType<typeof setTimeout> | undefined;
  /** When {@link probeTimer} fires. */
  private probeTimerAt: number | undefined;
  private stopped = false;

  constructor(private readonly options: ReceiverGateOptions) {}

  /** What a run of `job` may do with its replies. */
  admit(job: Job): Admission {
    if (this.state.down === undefined) return "send";
    if (this.reconciled()) return "send";
    const hasReplies = job.replies !== undefined && job.delivered < job.replies.length;
    const admitted = admitPost(this.state, this.options.now(), this.options.policy(), hasReplies);
    this.state = admitted.state;
    return admitted.admission;
  }

  /** The lane `key` is held: it waits for the receiver (see `JobLedger.hold`). */
  hold(key: string): void {
    this.held.add(key);
    this.scheduleProbe();
  }

  /** The lane `key` runs (woken, or its max age came): it no longer waits. */
  started(key: string): void {
    this.held.delete(key);
  }

  /** Rules on a run's outcome (see `passCircuit`), reporting and acting on a change of state. */
  rule(outcome: JobOutcome, admission: Admission): CircuitOutcome {
    // The hot path: a healthy receiver that answered, or a run that posted nothing.
    if (outcome.kind === "fenced" && admission !== "probe") return outcome;
    if (outcome.kind !== "unanswered" && outcome.kind !== "fenced" && admission !== "probe") {
      const healthy = this.state.failures === 0 && this.state.down === undefined;
      if (outcome.kind !== "wait" && (outcome.answered !== true || healthy)) return outcome;
      if (outcome.kind === "wait") {
        this.reconciled();
        // Admitted to wait, but the receiver came back up while this run asked its brain: the
        // lanes held then were woken without it, so it runs again now (no attempt spent).
        if (this.state.down === undefined) return { kind: "retry", job: outcome.job, delayMs: 0 };
        return outcome;
      }
    }
    this.reconciled();
    const ruling = passCircuit(outcome, {
      state: this.state,
      policy: this.options.policy(),
      admission,
      now: this.options.now(),
    });
    this.state = ruling.state;
    if (ruling.change === "down") this.wentDown();
    else if (ruling.change === "up") this.cameUp();
    else if (this.state.down !== undefined) this.scheduleProbe();
    return ruling.outcome;
  }

  /** How the receiver stands. */
  view(): ReceiverView {
    const { down } = this.state;
    const { channel } = this.options;
    if (down === undefined) return { channel, up: true, waiting: this.held.size };
    return { channel, up: false, since: down.since, waiting: this.held.size, nextProbeAt: down.probeAt };
  }

  /**
   * Applies a reload of the policy (see `underPolicy`): a circuit of another receiver, or one
   * turned off, starts afresh and wakes what waited. True when it changed.
   */
  private reconciled(): boolean {
    const step = underPolicy(this.state, this.options.policy());
    if (step.state === this.state) return false;
    this.state = step.state;
    if (step.change === "up") this.cameUp();
    return true;
  }

  /** Stops the probe timer: nothing is woken any more. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
  }

  private wentDown(): void {
    const { channel, logger, metrics } = this.options;
    metrics.receiverState(channel, false);
    const next = this.state.down?.probeAt ?? this.options.now();
    logger.warn("receiver down: replies wait without spending attempts; one probe at a time tries it", {
      channel,
      failures: this.state.failures,
      next_probe_in_ms: Math.max(0, next - this.options.now()),
      // Conversations already held, and every message of the channel not yet finished: the
      // failing runs join the held ones as their retries come due.
      waiting: this.held.size,
      pending: this.options.pending(),
    });
    this.scheduleProbe();
  }

  private cameUp(): void {
    const { channel, logger, metrics } = this.options;
    clearTimeout(this.probeTimer);
    this.probeTimer = undefined;
    metrics.receiverState(channel, true);
    const keys = [...this.held];
    this.held.clear();
    logger.info("receiver up: waiting conversations resume", {
      channel,
      waiting: keys.length,
      pending: this.options.pending(),
    });
    this.options.wake(keys);
  }

  /** Sets the timer of the next probe: at its time, the lane held longest runs as the probe. */
  private scheduleProbe(): void {
    const { down } = this.state;
    if (this.stopped || down === undefined || this.held.size === 0) return;
    const now = this.options.now();
    // While a probe is out the timer is set to when it is given up, so that a probe whose run
    // never ends cannot keep the others waiting; once it reports, to the next probe's time.
    const at = down.probingUntil !== undefined && now < down.probingUntil ? down.probingUntil : down.probeAt;
    if (this.probeTimer !== undefined && this.probeTimerAt === at) return;
    clearTimeout(this.probeTimer);
    this.probeTimerAt = at;
    this.probeTimer = setTimeout(
      () => {
        this.probeTimer = undefined;
        const first = this.held.values().next();
        if (first.done === true) return;
        this.held.delete(first.value);
        this.options.wake([first.value]);
      },
      Math.max(0, at - now),
    );
  }
}
