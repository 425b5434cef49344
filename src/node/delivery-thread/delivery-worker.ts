// Entry of the delivery thread (dist/delivery-worker.js), started by dist/node.js: it runs the
// consumer (brain calls, conversation memory, outbound posts) so that the main thread keeps
// only the inbound path and the queue, and the service uses a second core under load.

import { parentPort, workerData } from "node:worker_threads";
import { ChannelError, errorMessage, isChannelError } from "../../core/channel-error.js";
import { systemClock } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { RunHooks } from "../../core/consumer/create-consumer.js";
import { conversationKey } from "../../core/conversation/conversation-store.js";
import type { Job } from "../../core/lifecycle/job.js";
import type { Answered } from "../../core/lifecycle/lane-store.js";
import type { Admission } from "../../core/receiver/receiver-circuit.js";
import type { RunEvent } from "../../core/timeline/timeline-event.js";
import { createNodeConsumer, type NodeConsumer } from "../consumer/node-consumer.js";
import { openStateBackend } from "../state/open-state-backend.js";
import type { StateBackend } from "../state/state-backend.js";
import { startTelemetry } from "../telemetry/start-telemetry.js";
import type { Telemetry } from "../telemetry/telemetry.js";
import type { DeliveryThreadData, FromDeliveryThread, ToDeliveryThread } from "./delivery-thread-messages.js";
import { createThreadLogger } from "./thread-logger.js";
import { createThreadMetrics, type MetricEvent } from "./thread-metrics.js";
import { createTurnBatcher } from "./turn-batcher.js";

if (parentPort === null) throw new Error("delivery-worker.js runs as the delivery thread of dist/node.js");
const port = parentPort;
const { config, pauses } = workerData as DeliveryThreadData;
// The metric events of a turn travel as one array in one message of the outbox's batch.
let turnEvents: MetricEvent[] | undefined;
const outbox = createTurnBatcher<FromDeliveryThread>((batch) => {
  turnEvents = undefined;
  port.postMessage(batch);
});
const logger = createThreadLogger((message) => outbox.push(message), config.log_level);
const metrics = config.observability.metrics
  ? createThreadMetrics((event) => {
      if (turnEvents === undefined) {
        turnEvents = [event];
        outbox.push({ kind: "metrics", events: turnEvents });
      } else turnEvents.push(event);
    })
  : undefined;

let state: StateBackend | undefined;
let built: NodeConsumer;
// Brain calls and reply POSTs happen here: this thread exports their spans itself (the main
// thread, reading the same environment, says whether export is on).
const telemetry: Telemetry | undefined = await startTelemetry(logger, { announce: false });
try {
  // A backend of its own (with state_dir a connection of its own: better-sqlite3 connections
  // cannot cross threads, and WAL lets this one write conversations while the main thread
  // writes the journal).
  // Never Postgres: config check refuses delivery_thread with postgres_url_env.
  state = await openStateBackend(config, systemClock, logger, (name) => process.env[name], "reader");
  built = await createNodeConsumer({
    config,
    logger,
    env: (name) => process.env[name],
    state,
    metrics,
    telemetry,
    // Sent from the main thread, which holds the configuration's destinations and their keys.
    operatorEvents: { emit: (event) => outbox.push({ kind: "operator_event", event }) },
    pausedBrains: pauses,
  });
} catch (error) {
  await state?.close();
  await telemetry?.shutdown().catch(() => undefined);
  outbox.push({
    kind: "failed",
    code: isChannelError(error) ? error.code : "internal_error",
    message: errorMessage(error),
  });
  outbox.flush();
  process.exit(1);
}
const { consumer } = built;
const memory = state.conversations;
// With state_dir the journal is durable, and a run goes on only once its step is stored.
const durable = state.mode === "sqlite";
const awaitingAck = new Map<number, { resolve: () => void; reject: (error: Error) => void }>();
// Runs whose last ack said the receiver went down (with state_dir, where steps are acknowledged).
const heardDown = new Set<number>();
const progress = (id: number, job: Job, answered: Answered | undefined): Promise<void> | undefined => {
  const step =
    answered === undefined ? { kind: "progress" as const, id, job } : { kind: "progress" as const, id, job, answered };
  if (!durable) {
    // In memory the conversation memory lives here, where the brains read it: the turns stay here,
    // and the main thread gets only what numbers the replies.
    outbox.push(answered === undefined ? { ...step, ack: false } : { ...step, answered: { turns: [] }, ack: false });
    if (answered === undefined || answered.turns.length === 0) return undefined;
    return memory.append(conversationKey(job.message.channel, job.message.message.conversationId), answered.turns);
  }
  return new Promise<void>((resolve, reject) => {
    awaitingAck.set(id, { resolve, reject });
    outbox.push({ ...step, ack: true });
  });
};

let inFlight = 0;
let closing = false;
let poolsClosed = false;
const finish = (): void => {
  // SQLite or memory here (config check refuses the thread with Postgres): closed at once.
  void state?.close();
  // The spans still buffered are exported before the thread says it is closed, within the
  // main thread's wait for it.
  (telemetry?.shutdown() ?? Promise.resolve())
    .catch((error: unknown) => logger.warn("telemetry: cannot export the last spans", { error: errorMessage(error) }))
    .finally(() => {
      outbox.push({ kind: "closed" });
      outbox.flush();
      port.close();
    })
    .catch(() => undefined);
};
/**
 * As on the main thread, closing aborts posts still in flight (the main thread has stopped
 * waiting for them); the thread ends once the runs in hand have returned. A brain call cannot
 * be aborted, so the main thread gives up on the thread after a bounded wait.
 */
const close = (): void => {
  closing = true;
  built
    .close()
    .catch((error: unknown) => logger.warn("cannot close the outbound connections", { error: errorMessage(error) }))
    .finally(() => {
      poolsClosed = true;
      if (inFlight === 0) finish();
    })
    .catch(() => undefined);
};

const start = (id: number, job: Job, firstSequence: number, admission: Admission, record: boolean): void => {
  inFlight += 1;
  const events: RunEvent[] = [];
  const hooks: RunHooks = {
    firstSequence,
    save: (next, answered) => progress(id, next, answered),
    receiverDown: () => heardDown.has(id),
    ...(record ? { record: (recorded: readonly RunEvent[]) => events.push(...recorded) } : {}),
  };
  consumer
    .run(job, hooks, admission)
    .then(
      (outcome) => outbox.push({ kind: "outcome", id, outcome, ...(record ? { events } : {}) }),
      (error: unknown) => outbox.push({ kind: "rejected", id, message: errorMessage(error) }),
    )
    .finally(() => {
      heardDown.delete(id);
      inFlight -= 1;
      if (poolsClosed && inFlight === 0) finish();
    })
    .catch(() => undefined);
};

/**
 * A reload's variables were resolved on the main thread (files included) and win over this
 * thread's environment, which was fixed when it started.
 */
const reload = (id: number, next: Config, env: Readonly<Record<string, string | undefined>>): void => {
  built
    .reload(next, (name) => (Object.hasOwn(env, name) ? env[name] : process.env[name]))
    .then(
      () => outbox.push({ kind: "reloaded", id }),
      (error: unknown) =>
        outbox.push({
          kind: "reload_failed",
          id,
          code: isChannelError(error) ? error.code : "internal_error",
          message: errorMessage(error),
        }),
    )
    .catch(() => undefined);
};

port.on("message", (batch: ToDeliveryThread[]) => {
  for (const message of batch) {
    if (message.kind === "run")
      start(message.id, message.job, message.firstSequence, message.admission, message.record);
    else if (message.kind === "reload") reload(message.id, message.config, message.env);
    else if (message.kind === "progressed") {
      const waiter = awaitingAck.get(message.id);
      awaitingAck.delete(message.id);
      if (message.receiverDown === true) heardDown.add(message.id);
      if (message.error === undefined) waiter?.resolve();
      else if (message.fenced === true) waiter?.reject(new ChannelError("lane_fenced", message.error));
      else waiter?.reject(new Error(message.error));
    } else if (message.kind === "close" && !closing) close();
  }
});
outbox.push({ kind: "ready" });
