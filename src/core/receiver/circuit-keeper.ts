import type { CircuitStore, HeldLanes, StoredCircuit } from "./circuit-store.js";
import {
  admitPost,
  type CircuitChange,
  type CircuitPolicy,
  type CircuitState,
  deferProbe,
  type PostReport,
  RECEIVER_UP,
  recordPost,
  releaseProbe,
  underPolicy,
} from "./receiver-circuit.js";

/** How a channel's receiver stands, as a run needs to know it. */
export interface CircuitView {
  /** The receiver is down: replies wait (the keeper wakes them). */
  readonly down: boolean;
  /** Failures are counted against it: a success is worth reporting, to reset the count. */
  readonly failing: boolean;
}

/**
 * Where a change of state came from. `madeHere` is false for a change another writer made (a
 * replica's), which this runtime only learned of: what is said once for the whole service (an
 * operator event) is said by the one that made the change. `downSince` is when a receiver that
 * is up again went down, when known. `restarted`: the circuit started afresh, up, because a
 * reload pointed it at another receiver or turned it off, not because the receiver answered:
 * nothing is announced as the receiver's recovery then.
 */
export interface ChangeOrigin {
  readonly madeHere: boolean;
  readonly downSince?: number | undefined;
  readonly restarted?: boolean | undefined;
}

/** What a step of {@link CircuitKeeper} makes of the stored circuit. */
interface KeeperStep {
  readonly state: CircuitState;
  readonly change?: CircuitChange | undefined;
  /** The change is the circuit starting afresh under a reloaded policy. */
  readonly restarted?: boolean | undefined;
}

/** What came of waking a held lane: it posts as the probe, it runs, nothing of it waits any more, or it could not be reached. */
export type WakeResult = "probing" | "woken" | "idle" | "unreachable";

/** What a channel's circuit keeper works with: each runtime gives its storage, timer and lanes. */
export interface CircuitKeeperDeps {
  readonly channel: string;
  /** Asked at each decision, so that a reload of `webhook.delivery` reaches the circuit at once. */
  readonly policy: () => CircuitPolicy | Promise<CircuitPolicy>;
  readonly now: () => number;
  readonly store: CircuitStore;
  readonly held: HeldLanes;
  /**
   * Wakes held lanes: every one once the receiver is up, or, with `probeUntil`, the first in line
   * as the probe, which is its own until then (a run that starts later posts as a waiting one).
   */
  readonly wake: (
    keys: readonly string[],
    probeUntil?: number,
  ) => readonly WakeResult[] | Promise<readonly WakeResult[]>;
  /** Asks for {@link CircuitKeeper.due} at `at` (epoch ms), replacing the call asked for before; undefined: none. */
  readonly schedule: (at: number | undefined) => void | Promise<void>;
  /** A change of state: the log line, the metrics and the operator event (`waiting`: lanes held here). */
  readonly changed: (
    change: CircuitChange,
    state: CircuitState,
    waiting: number,
    origin: ChangeOrigin,
  ) => void | Promise<void>;
  /** A shared store (replicas on Postgres) is read this often: another replica's changes reach this one. */
  readonly refreshMs?: number | undefined;
  /** Lanes woken per call once the receiver is up; the call that follows wakes the rest. Default 50. */
  readonly wakeBatch?: number;
  /** The circuit as the store held it at the start, when it could read it at once: runs are admitted by it. */
  readonly initial?: StoredCircuit | undefined;
}

/** Writes a step tried before giving up on a store that others keep moving. */
const MAX_WRITES = 20;

/** The first wait before lanes that could not be woken are tried again; it doubles up to the next. */
export const FIRST_UNREACHABLE_WAIT_MS = 1_000;
/** The longest wait between two rounds of waking lanes that cannot be reached. */
export const MAX_UNREACHABLE_WAIT_MS = 60_000;

/**
 * One channel's receiver circuit (the pure rules of `receiver-circuit.ts`), written once for every
 * runtime and store: it records what runs report (an unanswered POST, an answer while failures
 * are counted, a probe's result), holds the lanes whose replies wait, wakes them all once the
 * receiver is up, and at each probe's time wakes the lane that waited longest as the probe. The
 * state lives in the {@link CircuitStore}, every change written over the version it was read at;
 * the runtime only stores, wakes and keeps the timer: Node in memory or on Postgres, the
 * receiver object on Workers.
 */
export class CircuitKeeper {
  /** The circuit as last read or written here. */
  private known: StoredCircuit;
  private scheduledAt: number | undefined;
  private readonly wakeBatch: number;
  /** While up: lanes left to wake could not be reached; the next round waits until then. */
  private wakeAgainAt: number | undefined;
  private wakeWait = FIRST_UNREACHABLE_WAIT_MS;
  /** The store was read, or given at the start: until then a shared one may hold the receiver down. */
  private heard: boolean;

  constructor(private readonly deps: CircuitKeeperDeps) {
    this.wakeBatch = deps.wakeBatch ?? 50;
    this.known = deps.initial ?? { state: RECEIVER_UP, version: 0 };
    this.heard = deps.initial !== undefined || deps.refreshMs === undefined;
  }

  /** How the receiver stands as this runtime last knew it: what a run is admitted by. */
  view(): CircuitView {
    // Not read yet: an answer is worth telling (the row may say down from before this runtime).
    if (!this.heard) return { down: false, failing: true };
    return viewOf(this.known.state);
  }

  /** The circuit as this runtime last read or wrote it. */
  state(): CircuitState {
    return this.known.state;
  }

  /**
   * Records what a run did: its last reply POST (`report`, null when it posted nothing) and
   * whether it ran as the probe; `holdAs` (its lane) waits should the receiver be down. Answers
   * how the receiver stands now.
   */
  async record(report: PostReport | null, wasProbe: boolean, holdAs: string | null): Promise<CircuitView> {
    const policy = await this.deps.policy();
    const now = this.deps.now();
    const { state, change, from, restarted } = await this.update((stored) => {
      const reconciled = underPolicy(stored, policy);
      if (report !== null) {
        const step = recordPost(reconciled.state, report, now, policy, wasProbe);
        if (step.change !== undefined) return { state: step.state, change: step.change };
        // An answer from the receiver the circuit counted against (the reload only turned the
        // circuit off) is its recovery, to be told as such; of another receiver, it says nothing
        // of the one that was down.
        const recovered = (report.answered || report.answeredBefore === true) && stored.target === policy.target;
        return {
          state: step.state,
          change: reconciled.change,
          restarted: reconciled.change !== undefined && !recovered,
        };
      }
      const released = wasProbe ? releaseProbe(reconciled.state) : reconciled.state;
      return { state: released, change: reconciled.change, restarted: reconciled.change !== undefined };
    });
    if (holdAs !== null && state.down !== undefined) await this.deps.held.add(holdAs);
    if (change !== undefined) {
      await this.apply(change, state, {
        madeHere: true,
        downSince: from.down?.since,
        restarted: restarted || undefined,
      });
    }
    await this.reschedule();
    return viewOf(state);
  }

  /**
   * The timer's call: reads the circuit again (another replica may have changed it), wakes what
   * waits once the receiver is up, and, while it is down and a probe is due, wakes the lane that
   * waited longest as the probe (one that has nothing to post any more gives its turn to the next).
   */
  async due(): Promise<void> {
    this.scheduledAt = undefined;
    const policy = await this.deps.policy();
    const before = this.known.state;
    const { state, change, from } = await this.update((stored) => underPolicy(stored, policy));
    const learned = change ?? learnedElsewhere(before, state);
    const origin = change === undefined ? before : from;
    if (learned !== undefined) {
      const madeHere = change !== undefined;
      // Made here by this step, the change is the policy's (only `underPolicy` ran); learned from
      // another writer, it is a restart when the circuit this runtime knew was on another target
      // (a circuit turned off may also have come up by an answer, which the state does not tell).
      const retargeted = before.target !== undefined && before.target !== policy.target;
      const restarted = madeHere || (learned === "up" && retargeted);
      await this.apply(learned, state, { madeHere, downSince: origin.down?.since, restarted: restarted || undefined });
    } else if (state.down === undefined) await this.wakeHeld();
    else await this.probe(policy);
    await this.reschedule();
  }

  /** Wakes the lanes held, a batch at a time (the timer wakes the rest). */
  private async wakeHeld(): Promise<void> {
    const keys = await this.deps.held.take(this.wakeBatch);
    if (keys.length === 0) return;
    const results = await this.deps.wake(keys);
    // One that could not be woken waits on (its own timer runs it at its max age meanwhile).
    for (const [index, key] of keys.entries()) {
      if (results[index] === "unreachable") await this.deps.held.add(key);
    }
    // A round that reached none tries again after a wait, doubling while none is reached: what
    // is left cannot be reached now, and trying at once would loop.
    if (keys.every((_key, index) => results[index] === "unreachable")) {
      this.wakeAgainAt = this.deps.now() + this.wakeWait;
      this.wakeWait = Math.min(this.wakeWait * 2, MAX_UNREACHABLE_WAIT_MS);
    } else {
      this.wakeAgainAt = undefined;
      this.wakeWait = FIRST_UNREACHABLE_WAIT_MS;
    }
  }

  private async probe(policy: CircuitPolicy): Promise<void> {
    for (let tries = 0; tries < this.wakeBatch; tries += 1) {
      if ((await this.deps.held.count()) === 0) return;
      const now = this.deps.now();
      let until: number | undefined;
      await this.update((stored) => {
        const step = admitPost(stored, now, policy);
        until = step.admission === "probe" ? step.state.down?.probingUntil : undefined;
        return { state: step.state };
      });
      if (until === undefined) return;
      const [first] = await this.deps.held.take(1);
      const result = first === undefined ? "idle" : (await this.deps.wake([first], until))[0];
      if (result === "probing") return;
      if (result === "unreachable" && first !== undefined) {
        // Free again at the next probe's time, the lane at the back: a lane that stays out of
        // reach neither loops nor keeps the others from probing.
        await this.update((stored) => ({ state: deferProbe(stored, this.deps.now(), policy) }));
        await this.deps.held.add(first);
        return;
      }
      // Not probing after all: the probe is free again for the next in line.
      await this.update((stored) => ({ state: releaseProbe(stored) }));
    }
  }

  private async apply(change: CircuitChange, state: CircuitState, origin: ChangeOrigin): Promise<void> {
    await this.deps.changed(change, state, await this.deps.held.count(), origin);
    if (change === "up") await this.wakeHeld();
  }

  /**
   * Sets the timer from the state: now while lanes are to be woken; while down, the next probe
   * (or the end of the probe out); with a shared store, soon enough to learn of another
   * replica's probe.
   */
  private async reschedule(): Promise<void> {
    const { down } = this.known.state;
    const now = this.deps.now();
    const waiting = await this.deps.held.count();
    let at: number | undefined;
    if (down === undefined) {
      if (waiting > 0) at = Math.max(now, this.wakeAgainAt ?? now);
    } else if (down.probingUntil !== undefined && now < down.probingUntil) {
      at = down.probingUntil;
    } else if (waiting > 0) {
      at = down.probeAt;
    }
    const { refreshMs } = this.deps;
    if (refreshMs !== undefined && waiting > 0 && down !== undefined) at = Math.min(at ?? Infinity, now + refreshMs);
    if (at === this.scheduledAt) return;
    this.scheduledAt = at;
    await this.deps.schedule(at);
  }

  /**
   * Applies `step` to the stored circuit and writes the result over the version it read,
   * reading again when another writer got there first. A step that changes nothing writes nothing.
   * Answers the step's result and the state it was applied to (`from`).
   */
  private async update(
    step: (state: CircuitState) => KeeperStep,
  ): Promise<KeeperStep & { readonly from: CircuitState }> {
    const { store, channel } = this.deps;
    for (let writes = 0; writes < MAX_WRITES; writes += 1) {
      const stored = await store.read(channel);
      this.heard = true;
      const next = step(stored.state);
      if (next.state === stored.state) {
        this.known = stored;
        return { ...next, from: stored.state };
      }
      if (await store.write(channel, next.state, stored.version)) {
        this.known = { state: next.state, version: stored.version + 1 };
        return { ...next, from: stored.state };
      }
    }
    throw new Error(`the receiver circuit of channel "${channel}" kept changing under this write`);
  }
}

/** A change another writer made since this runtime last looked (a replica's probe, its failures). */
function learnedElsewhere(before: CircuitState, now: CircuitState): CircuitChange | undefined {
  if (before.down !== undefined && now.down === undefined) return "up";
  if (before.down === undefined && now.down !== undefined) return "down";
  return undefined;
}

function viewOf(state: CircuitState): CircuitView {
  return { down: state.down !== undefined, failing: state.down === undefined && state.failures > 0 };
}
