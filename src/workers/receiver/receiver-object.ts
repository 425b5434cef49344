import { DurableObject } from "cloudflare:workers";
import { errorMessage } from "../../core/channel-error.js";
import { channelName } from "../../core/config/validate-config.js";
import {
  admitPost,
  type CircuitPolicy,
  type CircuitState,
  circuitPolicyOf,
  type PostReport,
  recordPost,
  releaseProbe,
  underPolicy,
} from "../../core/receiver/receiver-circuit.js";
import type { ReceiverStanding } from "../../core/receiver/receiver-standing.js";
import { partsFor } from "../environment-parts.js";
import { MeteredSql, type StorageUsage } from "../metered-sql.js";
import type { WorkerEnv } from "../worker-env.js";
import { ReceiverStorage } from "./receiver-storage.js";
import type { ReceiverView } from "./receiver-views.js";

/** Conversations woken per alarm run when the receiver is up again; the next run wakes the rest. */
export const WAKE_BATCH = 50;

/** The policy when the configuration cannot be read: `webhook.delivery`'s defaults. */
const DEFAULT_POLICY = circuitPolicyOf({
  outbound_url: "",
  delivery: { circuit_failures: 5, initial_delay_ms: 1_000, max_delay_ms: 600_000, timeout_ms: 10_000 },
});

/**
 * One channel's receiver circuit on Workers (the core's `receiver-circuit.ts`), addressed by
 * `idFromName(channel)`: the state every conversation object of the channel shares, in SQLite.
 * Conversations report to it only when something is wrong (a POST unanswered, a success while
 * failures are counted, a probe's result, replies held); the answer tells them how it stands.
 * Held conversations are listed in the order they began to wait: the alarm wakes the first as
 * the probe when one is due, and all of them, {@link WAKE_BATCH} per run, once it is up.
 */
export class ReceiverObject extends DurableObject<WorkerEnv> {
  private readonly store: ReceiverStorage;
  private readonly sql: MeteredSql;
  /** The alarm as set, null for none, undefined until read: `setAlarm` is billed. */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    this.store = new ReceiverStorage(this.sql);
  }

  /** What the object did that is billed, since it was constructed (the cost test reads it). */
  get usage(): StorageUsage {
    return { ...this.sql.usage };
  }

  /**
   * A conversation's report: its last POST (`report`, null when it posted nothing), whether it
   * ran as the probe, and, with `holdAs` (its object's name), that its replies wait should the
   * receiver be down. Answers how the receiver stands now.
   */
  async report(
    channel: string,
    report: PostReport | null,
    wasProbe: boolean,
    holdAs: string | null,
  ): Promise<ReceiverView> {
    const policy = await this.policy(channel);
    // Read after the await: another report may have been taken meanwhile.
    const now = Date.now();
    const before = this.store.state();
    const reconciled = underPolicy(before, policy);
    let state: CircuitState = reconciled.state;
    let change = reconciled.change;
    if (report !== null) {
      const step = recordPost(state, report, now, policy, wasProbe);
      state = step.state;
      change = step.change ?? change;
    } else if (wasProbe) {
      state = releaseProbe(state);
    }
    if (state !== before) this.store.save(state);
    if (holdAs !== null && state.down !== undefined) this.store.addWaiting(holdAs);
    if (change !== undefined) await this.changed(channel, change, state);
    await this.schedule(state, now);
    return { down: state.down !== undefined, failing: state.down === undefined && state.failures > 0 };
  }

  /** How the receiver stands; reads only. */
  status(): ReceiverStanding {
    const { down } = this.store.state();
    const waiting = this.store.waitingCount();
    if (down === undefined) return { up: true, waiting };
    return { up: false, since: down.since, waiting, nextProbeAt: down.probeAt };
  }

  /**
   * Up: wakes the waiting conversations, a batch per run. Down: when a probe is due and none is
   * out, wakes the conversation that has waited longest as the probe; one that has nothing to
   * post any more (its job left the lane) gives its turn to the next.
   */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.sql.usage.alarmRuns += 1;
    const channel = this.store.channel();
    if (channel === undefined) return;
    const policy = await this.policy(channel);
    const now = Date.now();
    let state = this.store.state();
    const reconciled = underPolicy(state, policy);
    if (reconciled.state !== state) {
      state = reconciled.state;
      this.store.save(state);
      if (reconciled.change !== undefined) await this.changed(channel, reconciled.change, state);
    }
    if (state.down === undefined) {
      const woken = this.store.takeWaiting(WAKE_BATCH);
      const results = await Promise.all(
        woken.map(async (name) => ({ name, woken: await this.wake(name, channel, false) })),
      );
      // One that could not be woken waits on (its own alarm runs it at its max age meanwhile).
      for (const { name, woken: ok } of results) if (ok === "unreachable") this.store.addWaiting(name);
      await this.schedule(state, now, woken.length === WAKE_BATCH);
      return;
    }
    for (let tries = 0; tries < WAKE_BATCH; tries += 1) {
      const admitted = admitPost(state, now, policy);
      if (admitted.admission !== "probe") break;
      const [first] = this.store.takeWaiting(1);
      if (first === undefined) break;
      this.store.save(admitted.state);
      const woken = await this.wake(first, channel, true);
      if (woken === "probing") {
        state = admitted.state;
        break;
      }
      // Not probing after all: the probe is free again for the next in line.
      state = releaseProbe(admitted.state);
      this.store.save(state);
      if (woken === "unreachable") {
        this.store.addWaitingFirst(first);
        break;
      }
    }
    await this.schedule(state, now);
  }

  /**
   * The environment the object answers from; a method so that the tests' entry can hand it
   * theirs (as for the other objects).
   */
  protected environment(): WorkerEnv {
    return this.env;
  }

  /** The channel's circuit policy, from the configuration the Worker answers with. */
  private async policy(channel: string): Promise<CircuitPolicy> {
    this.store.rememberChannel(channel);
    const built = await partsFor(this.environment());
    const found = built.ok
      ? built.parts.config.channels.find((candidate) => channelName(candidate) === channel)
      : undefined;
    // Unreadable configuration: the defaults, for the receiver last counted against.
    return found === undefined
      ? { ...DEFAULT_POLICY, target: this.store.state().target ?? DEFAULT_POLICY.target }
      : circuitPolicyOf(found.webhook);
  }

  private async changed(channel: string, change: "down" | "up", state: CircuitState): Promise<void> {
    const built = await partsFor(this.environment());
    const logger = built.ok ? built.parts.logger : built.logger;
    const waiting = this.store.waitingCount();
    if (change === "down") {
      logger.warn("receiver down: replies wait without spending attempts; one probe at a time tries it", {
        channel,
        failures: state.failures,
        next_probe_in_ms: Math.max(0, (state.down?.probeAt ?? Date.now()) - Date.now()),
        waiting,
      });
    } else {
      logger.info("receiver up: waiting conversations resume", { channel, waiting });
    }
    if (built.ok) built.parts.metrics.receiverState(channel, change === "up");
  }

  /**
   * The alarm: now while conversations are to be woken (`more`, or any waiting while up); while
   * down, at the next probe, or when the probe out is given up, as long as anyone waits or a
   * probe is out. Kept in memory, so that a report that changes nothing writes no alarm.
   */
  private async schedule(state: CircuitState, now: number, more = false): Promise<void> {
    const { down } = state;
    let at: number | undefined;
    if (down === undefined) {
      if (more || this.store.waitingCount() > 0) at = now;
    } else {
      const probing = down.probingUntil !== undefined && now < down.probingUntil;
      if (probing) at = down.probingUntil;
      else if (this.store.waitingCount() > 0) at = down.probeAt;
    }
    if (at === undefined) return;
    this.alarmAt ??= await this.ctx.storage.getAlarm();
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    this.sql.usage.alarmsSet += 1;
    await this.ctx.storage.setAlarm(at);
  }

  /**
   * Wakes a waiting conversation (`asProbe`: to post as the probe). What came of it: `probing`
   * (it has replies to post, and posts one now), `woken`, `idle` (nothing of it waits any more),
   * or `unreachable` (logged; it waits on).
   */
  private async wake(conversation: string, channel: string, asProbe: boolean): Promise<WakeResult> {
    const stub = this.env.CONVERSATIONS.get(this.env.CONVERSATIONS.idFromName(conversation));
    try {
      const waits = await stub.receiverWake(channel, asProbe);
      if (!waits) return "idle";
      return asProbe ? "probing" : "woken";
    } catch (error) {
      const built = await partsFor(this.environment());
      (built.ok ? built.parts.logger : built.logger).warn(
        `cannot wake a waiting conversation: ${errorMessage(error)}`,
        { channel },
      );
      return "unreachable";
    }
  }
}

/** What waking a waiting conversation came to. */
type WakeResult = "probing" | "woken" | "idle" | "unreachable";
