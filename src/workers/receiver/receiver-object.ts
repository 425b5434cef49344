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
} from "../../core/receiver/receiver-circuit.js";
import type { ReceiverStanding } from "../../core/receiver/receiver-standing.js";
import { partsFor } from "../environment-parts.js";
import type { WorkerEnv } from "../worker-env.js";
import { ReceiverStorage } from "./receiver-storage.js";
import type { ReceiverView } from "./receiver-views.js";

/** Conversations woken per alarm run when the receiver is up again; the next run wakes the rest. */
export const WAKE_BATCH = 50;

/** The policy when the configuration cannot be read: `webhook.delivery`'s defaults. */
const DEFAULT_POLICY = circuitPolicyOf({
  circuit_failures: 5,
  initial_delay_ms: 1_000,
  max_delay_ms: 600_000,
  timeout_ms: 10_000,
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

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.store = new ReceiverStorage(ctx.storage.sql);
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
    const now = Date.now();
    const before = this.store.state();
    const policy = await this.policy(channel);
    let state: CircuitState = before;
    let change: "down" | "up" | undefined;
    if (report !== null) {
      const step = recordPost(before, report, now, policy, wasProbe);
      state = step.state;
      change = step.change;
    } else if (wasProbe) {
      state = releaseProbe(before);
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
   * out, wakes the conversation that has waited longest as the probe.
   */
  override async alarm(): Promise<void> {
    const now = Date.now();
    const state = this.store.state();
    const channel = this.store.channel();
    if (channel === undefined) return;
    if (state.down === undefined) {
      const woken = this.store.takeWaiting(WAKE_BATCH);
      await Promise.all(woken.map((name) => this.wake(name, channel, false)));
      if (this.store.waitingCount() > 0) await this.ctx.storage.setAlarm(now);
      return;
    }
    const admitted = admitPost(state, now, await this.policy(channel));
    if (admitted.admission === "probe") {
      const [first] = this.store.takeWaiting(1);
      if (first !== undefined) {
        this.store.save(admitted.state);
        await this.wake(first, channel, true);
        await this.schedule(admitted.state, now);
        return;
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
    if (!built.ok) return DEFAULT_POLICY;
    const found = built.parts.config.channels.find((candidate) => channelName(candidate) === channel);
    return found === undefined ? DEFAULT_POLICY : circuitPolicyOf(found.webhook.delivery);
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
      });
    } else {
      logger.info("receiver up: waiting conversations resume", { channel, waiting });
    }
    if (built.ok) built.parts.metrics.receiverState(channel, change === "up");
  }

  /** The alarm: now while conversations are to be woken, else at the next probe (or when the probe out expires). */
  private async schedule(state: CircuitState, now: number): Promise<void> {
    const { down } = state;
    if (down === undefined) {
      if (this.store.waitingCount() > 0) await this.ctx.storage.setAlarm(now);
      return;
    }
    if (this.store.waitingCount() === 0) return;
    const probing = down.probingUntil !== undefined && now < down.probingUntil;
    await this.ctx.storage.setAlarm(probing ? (down.probingUntil ?? now) : down.probeAt);
  }

  private async wake(conversation: string, channel: string, asProbe: boolean): Promise<void> {
    const stub = this.env.CONVERSATIONS.get(this.env.CONVERSATIONS.idFromName(conversation));
    try {
      await stub.receiverWake(channel, asProbe);
    } catch (error) {
      // Its own alarm still runs it at its max age; a lost wake-up costs time, never a message.
      const built = await partsFor(this.environment());
      (built.ok ? built.parts.logger : built.logger).warn(
        `cannot wake a waiting conversation: ${errorMessage(error)}`,
        {
          channel,
        },
      );
    }
  }
}
