import { DurableObject } from "cloudflare:workers";
import { errorMessage } from "../../core/channel-error.js";
import { DEFAULT_DELIVERY } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";
import { receiverEvent } from "../../core/operator-events/operator-event.js";
import { type ChangeOrigin, CircuitKeeper, type WakeResult } from "../../core/receiver/circuit-keeper.js";
import {
  type CircuitChange,
  type CircuitPolicy,
  type CircuitState,
  circuitPolicyOf,
  type PostReport,
} from "../../core/receiver/receiver-circuit.js";
import { type ReceiverStanding, standingOf } from "../../core/receiver/receiver-standing.js";
import { partsFor } from "../environment-parts.js";
import { MeteredSql, type StorageUsage } from "../metered-sql.js";
import { operatorEventsOf } from "../object-operator-events.js";
import type { WorkerEnv } from "../worker-env.js";
import { ReceiverStorage } from "./receiver-storage.js";
import type { ReceiverView } from "./receiver-views.js";

/** Conversations woken per alarm run when the receiver is up again; the next run wakes the rest. */
export const WAKE_BATCH = 50;

/**
 * One channel's receiver circuit on Workers, addressed by `idFromName(channel)`: the core's
 * {@link CircuitKeeper} over the object's storage (the state, and the conversations waiting,
 * in the order they began to wait) and its alarm. Conversations report to it only when something
 * is wrong (a POST unanswered, a success while failures are counted, a probe's result, replies
 * held); the answer tells them how it stands. The alarm wakes the conversation that waited
 * longest as the probe when one is due, and all of them, {@link WAKE_BATCH} per run, once it is up.
 */
export class ReceiverObject extends DurableObject<WorkerEnv> {
  private readonly store: ReceiverStorage;
  private readonly sql: MeteredSql;
  private readonly keeper: CircuitKeeper;
  /** The alarm as set, null for none, undefined until read: `setAlarm` is billed. */
  private alarmAt: number | null | undefined;

  constructor(ctx: DurableObjectState, env: WorkerEnv) {
    super(ctx, env);
    this.sql = new MeteredSql(ctx.storage.sql);
    this.store = new ReceiverStorage(this.sql);
    this.keeper = new CircuitKeeper({
      channel: "",
      policy: () => this.policy(),
      now: () => Date.now(),
      store: this.store,
      held: this.store,
      wake: (keys, probeUntil) => Promise.all(keys.map((key) => this.wake(key, probeUntil))),
      schedule: (at) => this.schedule(at),
      changed: (change, state, waiting, origin) => this.changed(change, state, waiting, origin),
      wakeBatch: WAKE_BATCH,
    });
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
    this.store.rememberChannel(channel);
    return await this.keeper.record(report, wasProbe, holdAs);
  }

  /** How the receiver stands; reads only. */
  status(): ReceiverStanding {
    return standingOf(this.store.read().state, this.store.count());
  }

  /** The keeper's timer. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    this.sql.usage.alarmRuns += 1;
    if (this.store.channel() === undefined) return;
    await this.keeper.due();
  }

  /**
   * The environment the object answers from; a method so that the tests' entry can hand it
   * theirs (as for the other objects).
   */
  protected environment(): WorkerEnv {
    return this.env;
  }

  /** The channel's circuit policy, from the configuration the Worker answers with. */
  private async policy(): Promise<CircuitPolicy> {
    const channel = this.store.channel() ?? "";
    const built = await partsFor(this.environment());
    const found = built.ok
      ? built.parts.config.channels.find((candidate) => channelName(candidate) === channel)
      : undefined;
    // Unreadable configuration: the defaults, for the receiver last counted against.
    if (found !== undefined) return circuitPolicyOf(found.webhook);
    const defaults = circuitPolicyOf({ outbound_url: "", delivery: DEFAULT_DELIVERY });
    return { ...defaults, target: this.store.read().state.target ?? defaults.target };
  }

  private async changed(change: CircuitChange, state: CircuitState, waiting: number, origin: ChangeOrigin) {
    const built = await partsFor(this.environment());
    const logger = built.ok ? built.parts.logger : built.logger;
    const channel = this.store.channel();
    const { failures } = state;
    const probeAt = state.down?.probeAt;
    if (change === "down") {
      logger.warn("receiver down: replies wait without spending attempts; one probe at a time tries it", {
        channel,
        failures,
        next_probe_in_ms: Math.max(0, (probeAt ?? Date.now()) - Date.now()),
        waiting,
      });
    } else if (origin.restarted === true) {
      logger.info(
        "receiver circuit started afresh by a reload (another outbound_url, or the circuit off): waiting conversations resume",
        { channel, waiting },
      );
    } else {
      logger.info("receiver up: waiting conversations resume", { channel, waiting });
    }
    if (!built.ok || channel === undefined) return;
    built.parts.metrics.receiverState(channel, change === "up");
    // One object per channel makes every change: each is told once.
    const found = built.parts.config.channels.find((candidate) => channelName(candidate) === channel);
    if (found === undefined || !origin.madeHere || origin.restarted === true) return;
    const events = operatorEventsOf(this.ctx, built.parts);
    events.emit(receiverEvent(change, channel, found.webhook.outbound_url, state, Date.now(), origin.downSince));
    events.settle();
  }

  /** Sets the one alarm, unless it is set for that time already (a report that changes nothing writes none). */
  private async schedule(at: number | undefined): Promise<void> {
    if (at === undefined) return;
    this.alarmAt ??= await this.ctx.storage.getAlarm();
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    this.sql.usage.alarmsSet += 1;
    await this.ctx.storage.setAlarm(at);
  }

  /** Wakes a waiting conversation (with `probeUntil`: to post as the probe until then); see {@link WakeResult}. */
  private async wake(conversation: string, probeUntil: number | undefined): Promise<WakeResult> {
    const channel = this.store.channel() ?? "";
    const stub = this.env.CONVERSATIONS.get(this.env.CONVERSATIONS.idFromName(conversation));
    try {
      const asProbe = probeUntil !== undefined;
      const waits = await stub.receiverWake(channel, asProbe, probeUntil);
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
