import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import type { Metrics } from "../../core/metrics/metrics.js";
import { receiverEvent } from "../../core/operator-events/operator-event.js";
import type { OperatorEvents } from "../../core/operator-events/operator-events.js";
import { CircuitClient } from "../../core/receiver/circuit-client.js";
import { CircuitKeeper, type WakeResult } from "../../core/receiver/circuit-keeper.js";
import type { CircuitStore, StoredCircuit } from "../../core/receiver/circuit-store.js";
import { createMemoryHeldLanes } from "../../core/receiver/memory-circuit-store.js";
import { type CircuitPolicy, type CircuitState, underPolicy } from "../../core/receiver/receiver-circuit.js";
import { type ReceiverStanding, standingOf } from "../../core/receiver/receiver-standing.js";
import { MAX_TIMER_MS } from "../../core/timer-limit.js";
import type { LaneSchedule } from "./lane-schedule.js";

/** Wait before the keeper's timer is tried again when its store did not answer. */
const RETRY_MS = 1_000;

/** How a channel's receiver stands, for `/readyz`, with the channel's name. */
export interface ReceiverView extends ReceiverStanding {
  readonly channel: string;
}

/** What a channel's circuit on Node is built from. */
export interface NodeCircuitOptions {
  readonly channel: string;
  readonly policy: () => CircuitPolicy;
  readonly now: () => number;
  readonly logger: Logger;
  readonly metrics: Metrics;
  /** The channel's lanes: held ones are woken there. */
  readonly lanes: LaneSchedule;
  /** Where the circuit's state is kept: this process's memory, or the row the replicas share. */
  readonly store: CircuitStore;
  /** With a shared store, how often to read it again while lanes are held here (see `CircuitKeeper`). */
  readonly refreshMs?: number | undefined;
  /** The channel's `outbound_url` now, named (redacted) in its operator events. */
  readonly outboundUrl?: (() => string) | undefined;
  /** Where `receiver.down` and `receiver.up` are raised, by the replica that made the change. */
  readonly operatorEvents?: OperatorEvents | undefined;
}

/** A channel's receiver circuit on Node: the core's keeper and client, over this process's lanes and timer. */
export interface NodeCircuit {
  readonly client: CircuitClient;
  /** The lane `key` runs (its own timer, or its max age, came): it no longer waits. */
  started(key: string): void;
  view(): ReceiverView;
  /**
   * The channel's settings changed (a reload): the keeper decides under them now, so that a
   * receiver moved to another origin, or a circuit turned off, releases what waits at once
   * rather than at the old receiver's next probe.
   */
  reconsider(): void;
  /** Stops the timer: nothing is woken any more. */
  stop(): void;
}

/**
 * Wires the core's {@link CircuitKeeper} (the state in `store`, the lanes held in memory, a
 * timer) and {@link CircuitClient} (what a run may post, the ruling on what it did) for one
 * channel of this process: a probe is the lane the keeper woke as such, and the log lines and
 * metrics of a change carry what this process holds.
 */
export function createNodeCircuit(options: NodeCircuitOptions): NodeCircuit {
  const { channel, lanes, logger, metrics, now } = options;
  const held = createMemoryHeldLanes();
  // The lane granted the probe and not started yet, until the probe's time runs out. The keeper
  // grants one at a time, again once that time ran out: a lane granted earlier that starts only
  // later (it waited for a run slot, or was let go and claimed again) runs as a waiting one, so
  // that it never posts beside the next probe.
  let probe: { readonly key: string; readonly until: number } | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  // With a shared store, what /readyz and the console show is the row as read every refresh: a
  // receiver another replica found down is down here too, though nothing waits here.
  let shared: CircuitState | undefined;
  const watching =
    options.refreshMs === undefined
      ? undefined
      : setInterval(() => {
          Promise.resolve(options.store.read(channel)).then(
            (stored) => {
              shared = stored.state;
              // What another replica made of the row reaches this one's admissions too.
              if ((stored.state.down === undefined) !== (keeper.state().down === undefined)) arm(now());
            },
            () => undefined,
          );
        }, options.refreshMs);
  watching?.unref();
  // A store of this process alone (memory, state_dir's file) answers at once: a receiver the last
  // run left down is down from the first run of this one, and its probe keeps the schedule it had.
  // A shared store (Postgres) is read at the keeper's first decision, and every refresh.
  const initial = options.refreshMs === undefined ? readAtStart(options.store, channel, logger) : undefined;
  const keeper: CircuitKeeper = new CircuitKeeper({
    channel,
    initial,
    policy: options.policy,
    now,
    store: options.store,
    held,
    wake(keys, probeUntil) {
      const results: WakeResult[] = keys.map((key) => {
        if (lanes.head(key) === undefined) return "idle";
        if (probeUntil === undefined) return "woken";
        probe = { key, until: probeUntil };
        return "probing";
      });
      lanes.wakeNow(keys);
      return results;
    },
    schedule: (at) => arm(at),
    changed(change, state, waiting, origin) {
      metrics.receiverState(channel, change === "up");
      if (origin.madeHere && origin.restarted !== true && options.outboundUrl !== undefined) {
        const url = options.outboundUrl();
        options.operatorEvents?.emit(receiverEvent(change, channel, url, state, now(), origin.downSince));
      }
      if (change === "down") {
        logger.warn("receiver down: replies wait without spending attempts; one probe at a time tries it", {
          channel,
          failures: state.failures,
          next_probe_in_ms: Math.max(0, (state.down?.probeAt ?? now()) - now()),
          // Conversations already held, and every message of the channel not yet finished: the
          // failing runs join the held ones as their retries come due.
          waiting,
          pending: lanes.size,
        });
      } else if (origin.restarted === true) {
        logger.info(
          "receiver circuit started afresh by a reload (another outbound_url, or the circuit off): waiting conversations resume",
          {
            channel,
            waiting,
            pending: lanes.size,
          },
        );
      } else {
        logger.info("receiver up: waiting conversations resume", { channel, waiting, pending: lanes.size });
      }
    },
    refreshMs: options.refreshMs,
  });
  /** The keeper's timer; a call that fails (its store did not answer) is tried again shortly. */
  function arm(at: number | undefined): void {
    clearTimeout(timer);
    timer = undefined;
    if (at === undefined || stopped) return;
    timer = setTimeout(
      () => {
        timer = undefined;
        keeper.due().catch((error: unknown) => {
          logger.warn(`cannot look at the receiver circuit: ${errorMessage(error)}`, { channel });
          arm(now() + (options.refreshMs ?? RETRY_MS));
        });
      },
      // A probe's deadline (twice the POST's timeout) may lie past what a timer takes: woken
      // early, the keeper looks again and arms anew.
      Math.min(MAX_TIMER_MS, Math.max(0, at - now())),
    );
  }
  // A receiver the last run left down under another outbound_url (or with the circuit now off)
  // is not this run's: the keeper's first decision starts it afresh, and nothing is announced.
  const leftDown = initial === undefined ? undefined : underPolicy(initial.state, options.policy()).state.down;
  if (leftDown !== undefined) {
    // As the last run left it: said, counted and alerted on as a receiver found down here.
    metrics.receiverState(channel, false);
    logger.warn(
      "receiver down, as the last run left it: replies wait without spending attempts; one probe at a time tries it",
      {
        channel,
        down_since: new Date(leftDown.since).toISOString(),
        next_probe_in_ms: Math.max(0, leftDown.probeAt - now()),
      },
    );
    arm(now());
  }
  // A shared row is read at once: a receiver another replica (or this one's last run) left down holds from the first run.
  if (options.refreshMs !== undefined) arm(now());
  const client = new CircuitClient({
    view: () => keeper.view(),
    record: (_channel, report, wasProbe, holdAs) => keeper.record(report, wasProbe, holdAs),
    takeProbe: (key) => {
      if (probe?.key !== key) return false;
      const live = now() < probe.until;
      probe = undefined;
      return live;
    },
    logger: () => logger,
  });
  return {
    client,
    started: (key) => {
      held.delete(key);
    },
    view: () => ({ channel, ...standingOf(shared ?? keeper.state(), held.count()) }),
    reconsider: () => arm(now()),
    stop() {
      stopped = true;
      clearInterval(watching);
      clearTimeout(timer);
      timer = undefined;
    },
  };
}

/**
 * The circuit a store of this process alone holds at start; undefined (the keeper reads it at
 * its first decision) when the store cannot answer at once or fails: a start never stops for it.
 */
function readAtStart(store: CircuitStore, channel: string, logger: Logger): StoredCircuit | undefined {
  try {
    const stored = store.read(channel);
    if (!(stored instanceof Promise)) return stored;
    // Not waited for: the keeper reads the store again at its first decision.
    stored.catch(() => undefined);
  } catch (error) {
    logger.warn(
      `cannot read the receiver circuit at start: it counts as up until its first decision: ${errorMessage(error)}`,
      {
        channel,
      },
    );
  }
  return undefined;
}
