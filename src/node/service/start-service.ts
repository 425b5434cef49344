import { systemClock, timeOrderedId } from "../../core/clock.js";
import type { Job } from "../../core/lifecycle/job.js";
import { noopMetrics } from "../../core/metrics/noop-metrics.js";
import type { OperatorEventSender } from "../../core/operator-events/operator-event-sender.js";
import type { TimelineRecorder } from "../../core/timeline/timeline-recorder.js";
import { waitAtMost } from "../../core/wait-at-most.js";
import { readAdminSecret } from "../admin/admin-secret.js";
import { createConsoleTally } from "../admin/console-tally.js";
import { createNodeAdmin } from "../admin/node-admin.js";
import { checkBindsFree } from "../listener/binds-free.js";
import { buildListeners, type PlannedListener } from "../listener/build-listeners.js";
import { closeServer } from "../listener/listen.js";
import { DEFAULT_LISTENER_LIMITS } from "../listener/listener-limits.js";
import { type Listener, serveListeners } from "../listener/serve-listeners.js";
import type { PrometheusMetrics } from "../metrics/prometheus-metrics.js";
import { createServiceMetrics } from "../metrics/service-metrics.js";
import type { JobQueue } from "../queue/job-queue.js";
import type { ReplicaLanes } from "../replicas/replica-lanes.js";
import { openStateBackend } from "../state/open-state-backend.js";
import type { StateBackend } from "../state/state-backend.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import { buildQueues } from "./build-queues.js";
import { channelSecrets } from "./channel-secrets.js";
import { startOperatorEvents } from "./node-operator-events.js";
import { createNodeReadiness } from "./node-readiness.js";
import { pokingAfterReplay } from "./poking-after-replay.js";
import { type ProgressLog, startProgressLog } from "./progress-log.js";
import { applyReload, type LiveSettings, variablesOf } from "./reload-service.js";
import { type ReplayPickup, roomIn, startReplayPickup } from "./replay-pickup.js";
import { type Resume, startResume } from "./resume-jobs.js";
import type { RunningService, StopResult } from "./running-service.js";
import type { ServiceOptions } from "./service-options.js";
import { type RunningConsumer, startConsumer } from "./start-consumer.js";
import { startTimeline } from "./start-timeline.js";

export type { Listener } from "../listener/serve-listeners.js";
export type { ReloadInputs, ReloadResult } from "./reload-service.js";
export type { RunningService, StopResult } from "./running-service.js";
export type { ServiceOptions } from "./service-options.js";

/** A replica's lease on Postgres: others take over its conversations this long after it stopped renewing. */
const DEFAULT_LEASE_MS = 5_000;

/** The least time the delivery thread gets to end on its own before it is stopped. */
const THREAD_CLOSE_GRACE_MS = 1_000;
/** How long a request still arriving when the listeners close has to be answered (`shutting_down`). */
const REQUEST_CLOSE_GRACE_MS = 1_000;

/** What a channel without a secret accepts: nothing (startService is never given one). */
const NO_SECRETS: readonly string[] = [];

/** What a start has built so far; a stop (or a failed start) takes down whatever is there. */
interface Parts {
  /** The configuration and secrets in force; a reload replaces them. */
  readonly live: LiveSettings;
  state?: StateBackend;
  consumer?: RunningConsumer;
  readonly queues: Map<string, JobQueue>;
  /** Undefined with `observability.metrics: false`. */
  metrics?: PrometheusMetrics | undefined;
  listeners: readonly PlannedListener[];
  /** Where each listener listens, once it does. */
  served: readonly Listener[];
  /** Puts replayed dead letters back on their lanes. */
  pickup?: ReplayPickup;
  resume?: Resume;
  /** The `progress` line every 10 s while there is traffic. */
  progress?: ProgressLog;
  /** With `postgres_url_env`: this replica's lease and conversations. */
  replicas?: ReplicaLanes;
  /** Where each message's timeline is recorded. */
  timeline?: TimelineRecorder;
  /** Dead letters, receiver changes and brain pauses, POSTed to the operator URLs. */
  operatorEvents?: OperatorEventSender;
  /** This thread's spans (the inbound ones; with `delivery_thread` the thread exports its own). */
  readonly telemetry?: Telemetry | undefined;
  shuttingDown: boolean;
}

/**
 * Starts the Node runtime in named steps: open the state, start the consumer, build one
 * bounded job queue per channel and resume unfinished work, build the listeners, serve. A
 * step that fails takes down what the earlier ones built, through the same {@link stopParts}
 * as a graceful stop, and the start rejects.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, logger } = options;
  const clock = options.clock ?? systemClock;
  const env = options.env ?? (() => undefined);
  const secrets = channelSecrets(config, options.secrets);
  const parts: Parts = {
    // A configured admin API without a usable secret stops the start rather than serving /admin/ open or silently off.
    live: { config, secrets, adminSecret: readAdminSecret(config, env, secrets), variables: variablesOf(config, env) },
    queues: new Map(),
    listeners: [],
    served: [],
    telemetry: options.telemetry,
    shuttingDown: false,
  };
  let served: Listener[];
  let consumer: RunningConsumer;
  let events: OperatorEventSender;
  try {
    await checkBindsFree(config.channels);
    const state = await openStateBackend(config, clock, logger, env, "service", options.timelineWriter);
    parts.state = state;
    logger.info("state", state.describe());
    if (state.postgres !== undefined) {
      const { pool, lanes, replica } = state.postgres;
      // Loaded here, with `pg`, so that a service on another backend never loads either.
      const { createReplicaLanes } = await import("../replicas/replica-lanes.js");
      parts.replicas = createReplicaLanes({
        url: env(config.postgres_url_env ?? "") ?? "",
        pool,
        lanes,
        replica,
        leaseMs: options.replicaLeaseMs ?? DEFAULT_LEASE_MS,
        logger,
        queues: () => parts.queues,
      });
      logger.info("replica", { id: replica, lease_ms: options.replicaLeaseMs ?? DEFAULT_LEASE_MS });
    }
    const timeline = startTimeline(config, state, clock, logger);
    parts.timeline = timeline;
    parts.metrics = createServiceMetrics(config, parts.queues, state, clock, parts.replicas);
    // The console's counts and the brains' state (admin only; otherwise the metrics pass untouched).
    const tally = createConsoleTally(config.admin !== undefined, () => clock.now());
    events = await startOperatorEvents({ config, env, logger, metrics: parts.metrics ?? noopMetrics, clock });
    parts.operatorEvents = events;
    consumer = await startConsumer(options, state, tally.watching(parts.metrics), parts.replicas?.brains, events);
    parts.consumer = consumer;
    parts.progress = startProgressLog({
      logger,
      queues: () => parts.queues.values(),
      now: () => clock.now(),
      intervalMs: options.progressIntervalMs,
    });
    // The memory mode's replay: as far as the queue has room (the letter stays listed
    // otherwise); the pickup puts it on its queue at once.
    const restore = (job: Job): boolean => {
      const queue = parts.queues.get(job.message.channel);
      if (queue === undefined || roomIn(queue) === 0) return false;
      void state.lanes.restore(job);
      parts.pickup?.poke();
      return true;
    };
    // Through `parts`, so that a reload's admin secret is the one checked. Never undefined
    // while the routes are mounted (only a restart turns admin on or off); "" matches no token.
    const secret = (): string => parts.live.adminSecret ?? "";
    const admin = createNodeAdmin({
      config,
      timeline: { store: state.timeline, recorder: timeline, clock },
      deadLetterStore: () => pokingAfterReplay(state.deadLetterStore(restore), () => parts.pickup?.poke()),
      lettersStored: state.mode !== "memory",
      secret,
      logger,
      status: { tally, queues: parts.queues, now: () => clock.now(), replica: state.postgres?.replica },
    });
    for (const [name, queue] of buildQueues({
      options,
      clock,
      state,
      consumer,
      admin,
      ownership: parts.replicas?.ownership,
      metrics: parts.metrics ?? noopMetrics,
      progress: (event) => parts.progress?.record(event),
      liveConfig: () => parts.live.config,
      served: () => parts.served,
      timeline,
      operatorEvents: events,
    })) {
      parts.queues.set(name, queue);
    }
    // Step 4, with state_dir: unfinished work of the last run; with Postgres: the lease, and the
    // conversations no replica runs. Then replayed dead letters, on every backend.
    if (state.sqlite !== undefined) parts.resume = startResume(state.sqlite.lanes, parts.queues, logger);
    await parts.replicas?.start();
    parts.pickup = startReplayPickup({
      lanes: state.lanes,
      queues: parts.queues,
      place: parts.replicas?.ownership.place,
      // Replays run at the end of their lanes: not before what a resume has still to load.
      ready: () => parts.resume?.done !== false && parts.replicas?.ownership.mayRun() !== false,
      logger,
    });
    parts.listeners = buildListeners(
      config.channels,
      {
        // Through `parts`, so that the secrets of a reload are the ones checked.
        secretsFor: (name) => parts.live.secrets.get(name) ?? NO_SECRETS,
        queueFor: (name) => queueOf(parts, name),
        clock,
        newId: options.newId ?? timeOrderedId,
        logger,
        idempotency: state.idempotency,
        ...(state.postgres === undefined ? {} : { authFailures: state.postgres.authFailures }),
        metrics: parts.metrics,
        timeline,
        metricsEndpoint: parts.metrics?.respond,
        isShuttingDown: () => parts.shuttingDown,
        admin: admin.deps,
        readiness: createNodeReadiness({
          queues: () => parts.queues.values(),
          state,
          isShuttingDown: () => parts.shuttingDown,
          deliveryThread: config.delivery_thread,
          now: () => clock.now(),
        }),
      },
      { ...DEFAULT_LISTENER_LIMITS, ...options.listenerLimits },
      options.telemetry,
    );
    served = await serveListeners(parts.listeners, logger);
    parts.served = served;
  } catch (error) {
    await stopParts(parts, 0);
    throw error;
  }
  const scope = {
    live: parts.live,
    consumer,
    operatorEvents: events,
    listeners: parts.listeners,
    logger,
    isShuttingDown: () => parts.shuttingDown,
    settingsChanged: () => {
      for (const queue of parts.queues.values()) queue.settingsChanged();
    },
  };
  let reloading: Promise<unknown> = Promise.resolve();
  return {
    listeners: served,
    claimLost: parts.state?.claimLost,
    stop: (timeoutMs) => stopParts(parts, timeoutMs),
    abandon: async () => ({
      left: (await Promise.all([...parts.queues.values()].map((queue) => queue.drain(0)))).flat(),
      fate: fateOf(parts),
    }),
    reload(next) {
      const result = reloading.then(() => applyReload(scope, next));
      reloading = result.catch(() => undefined);
      return result;
    },
  };
}

function queueOf(parts: Parts, channel: string): JobQueue {
  const queue = parts.queues.get(channel);
  if (queue === undefined) throw new Error(`no queue for channel ${channel}`);
  return queue;
}

/**
 * The stop, also the rollback of a failed start: refuse new messages, let accepted ones
 * finish (up to `timeoutMs`), close the sockets, then the consumer, then the database.
 */
async function stopParts(parts: Parts, timeoutMs: number): Promise<StopResult> {
  const deadline = Date.now() + timeoutMs;
  parts.shuttingDown = true;
  parts.replicas?.drain();
  parts.pickup?.stop();
  // Stored messages a resume has still to load were accepted too: they are loaded and run while
  // the stop's time lasts (new ones are refused), not left behind a "finished" line.
  if (parts.resume !== undefined && !parts.resume.done) await waitAtMost(parts.resume.finished, deadline - Date.now());
  const unloaded = parts.resume?.done === false;
  parts.resume?.stop();
  const waitMs = Math.max(0, deadline - Date.now());
  const left = (await Promise.all([...parts.queues.values()].map((queue) => queue.drain(waitMs)))).flat();
  // The last interval's counts, so that a stop does not swallow them.
  parts.progress?.flush();
  parts.progress?.stop();
  const requestGrace = Math.min(REQUEST_CLOSE_GRACE_MS, Math.max(0, deadline - Date.now()));
  await Promise.all(parts.listeners.map(({ server }) => closeServer(server, requestGrace)));
  // Runs still in flight were given up on when the wait ended; the delivery thread gets
  // what is left of it, but at least a short grace, to close its connections and database.
  // The listeners are closed, so every inbound span has ended: they are exported while the delivery
  // thread exports its own before it closes, so that a collector that hangs holds the stop up for
  // one export timeout, not one per thread (the last export of run-service then finds none left).
  await Promise.all([
    parts.consumer?.close(Math.max(THREAD_CLOSE_GRACE_MS, deadline - Date.now())),
    parts.telemetry?.flush(),
  ]);
  // The last dead letters' events (and any waiting for a retry) get one more try, then go.
  await parts.operatorEvents?.close(Math.max(THREAD_CLOSE_GRACE_MS, deadline - Date.now()));
  // Give finished-job deletes queued for this turn their commit before closing.
  await new Promise((resolve) => setImmediate(resolve));
  // Other replicas take what is left here at once, rather than when the lease runs out; the
  // deletes of finished jobs commit first, or the next replica would run those jobs again.
  await parts.state?.postgres?.lanes.flush().catch(() => undefined);
  await parts.replicas?.leave();
  await parts.timeline?.close();
  await parts.state?.close();
  return { left, unloaded, fate: fateOf(parts) };
}

function fateOf(parts: Parts): StopResult["fate"] {
  const mode = parts.state?.mode ?? "memory";
  return mode === "memory" ? "lost" : mode === "postgres" ? "shared" : "kept";
}
