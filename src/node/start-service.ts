import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { AcceptMessage } from "../core/app/accept-message.js";
import { createAccepts, createApp } from "../core/app/create-app.js";
import { type Clock, type IdGenerator, randomId, systemClock } from "../core/clock/clock.js";
import { bindKey, isLoopbackHost, parseBind } from "../core/config/bind-address.js";
import type { ChannelConfig, Config } from "../core/config/config-schema.js";
import { channelName } from "../core/config/validate-config.js";
import { redactUrl } from "../core/delivery/fetch-poster.js";
import type { Job } from "../core/delivery/job.js";
import type { Poster } from "../core/delivery/poster.js";
import { ChannelError, errorMessage } from "../core/errors/channel-error.js";
import type { IdempotencyStore } from "../core/idempotency/idempotency-store.js";
import { createMemoryIdempotencyStore } from "../core/idempotency/memory-idempotency-store.js";
import type { Logger } from "../core/log/logger.js";
import { type DeliveryThread, startDeliveryThread } from "./delivery-thread.js";
import { createInboundListener } from "./inbound-listener.js";
import { createJobQueue, type JobQueue } from "./job-queue.js";
import type { Journal } from "./journal.js";
import { createMemoryJournal } from "./memory-journal.js";
import { createNodeConsumer } from "./node-consumer.js";
import { createSqliteIdempotencyStore } from "./sqlite-idempotency-store.js";
import { createSqliteJournal, pruneIdempotencyKeys, type SqliteJournal } from "./sqlite-journal.js";
import { openStateDb, type StateDb } from "./sqlite-state.js";

/** What the Node service is started from. */
export interface ServiceOptions {
  readonly config: Config;
  /** Inbound secret per channel name; the caller has checked that none is empty. */
  readonly secrets: ReadonlyMap<string, string>;
  readonly logger: Logger;
  /** Reads the variables that brains and delivery name (`*_env`). Default: none set. */
  readonly env?: (name: string) => string | undefined;
  readonly clock?: Clock;
  readonly newId?: IdGenerator;
  /** Uniform in [0, 1), for retry jitter. */
  readonly random?: () => number;
  /** Outbound client of the in-thread consumer; default a keep-alive undici pool. */
  readonly poster?: Poster & { close?: () => Promise<void> };
  /**
   * Where the delivery thread comes from (dist/delivery-worker.js) and the environment it
   * sees; needed when the config sets `delivery_thread`. The thread builds its real parts
   * itself, so `poster` and `random` cannot be given with it.
   */
  readonly deliveryThread?: { readonly entry: URL; readonly env: Readonly<Record<string, string | undefined>> };
}

/** One listening socket and the channels it serves. */
export interface Listener {
  readonly host: string;
  readonly port: number;
  readonly channels: readonly string[];
}

/** What a stop left behind. */
export interface StopResult {
  /** Ids of accepted messages not finished when the wait ended. */
  readonly left: readonly string[];
  /** `kept` in state_dir (they resume at the next start) or `lost` (in-memory queue). */
  readonly fate: "kept" | "lost";
}

/** A started service. */
export interface RunningService {
  readonly listeners: readonly Listener[];
  /**
   * Graceful stop: new inbound requests get 503 `shutting_down`, accepted messages finish
   * (up to `timeoutMs`), then the sockets close.
   */
  stop(timeoutMs: number): Promise<StopResult>;
}

/** Seconds a shut-out or refused client is told to wait. */
const RETRY_AFTER_SECONDS = 5;
/** The least time the delivery thread gets to end on its own before it is stopped. */
const THREAD_CLOSE_GRACE_MS = 1_000;
/** How often a running service looks for dead letters replayed from the CLI. */
const REPLAY_POLL_MS = 1_000;

interface State {
  readonly journal: Journal;
  readonly idempotency: IdempotencyStore;
  readonly db: StateDb | undefined;
  readonly durable: SqliteJournal | undefined;
}

function openState(config: Config, logger: Logger, clock: Clock): State {
  if (config.state_dir === undefined) {
    return {
      journal: createMemoryJournal(logger),
      idempotency: createMemoryIdempotencyStore(),
      db: undefined,
      durable: undefined,
    };
  }
  const db = openStateDb(config.state_dir);
  pruneIdempotencyKeys(db, clock.now());
  const durable = createSqliteJournal(db, logger);
  return {
    journal: durable,
    idempotency: createSqliteIdempotencyStore(db),
    db,
    durable,
  };
}

/**
 * Starts the Node runtime: one bounded job queue per channel, the consumer (on the main thread
 * or on the delivery thread), and one HTTP server per distinct bind (channels that share a
 * bind share a server). With `state_dir`, accepted messages are committed to SQLite before
 * their 200 and unfinished ones resume here.
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, logger, secrets } = options;
  const clock = options.clock ?? systemClock;
  const newId = options.newId ?? randomId;
  const state = openState(config, logger, clock);
  let consumer: Pick<DeliveryThread, "run" | "close">;
  try {
    consumer = await startConsumer(options, state.db);
  } catch (error) {
    state.db?.close();
    throw error;
  }
  const queues = new Map<string, JobQueue>();
  for (const channel of config.channels) {
    queues.set(
      channelName(channel),
      createJobQueue({
        capacity: channel.webhook.buffer_capacity,
        retryAfterSeconds: 1,
        run: (job, onProgress) => consumer.run(job, onProgress),
        journal: state.journal,
        logger,
        now: () => clock.now(),
      }),
    );
  }
  const restore = (jobs: readonly Job[]): void => {
    for (const job of jobs) {
      const queue = queues.get(job.message.channel);
      if (queue === undefined) {
        logger.error("a stored message belongs to a channel that is no longer configured; it stays in state_dir", {
          message_id: job.message.id,
          channel: job.message.channel,
        });
      } else queue.restore([job]);
    }
  };
  let shuttingDown = false;
  const groups = new Map<string, ChannelConfig[]>();
  for (const channel of config.channels) {
    const group = groups.get(bindKey(channel.webhook.bind));
    if (group === undefined) groups.set(bindKey(channel.webhook.bind), [channel]);
    else group.push(channel);
  }

  const servers: { server: Server; listener: Listener }[] = [];
  let replayTimer: ReturnType<typeof setInterval> | undefined;
  try {
    if (state.durable !== undefined) {
      const durable = state.durable;
      const pending = durable.takePending();
      if (pending.length > 0) logger.info("resuming unfinished messages from state_dir", { count: pending.length });
      restore(pending);
      replayTimer = setInterval(() => {
        try {
          restore(durable.takeReplayed());
        } catch (error) {
          // A busy or locked database is retried at the next poll.
          logger.warn("cannot look for replayed dead letters", { error: errorMessage(error) });
        }
      }, REPLAY_POLL_MS);
      replayTimer.unref();
    }

    for (const channels of groups.values()) {
      const bind = channels[0]?.webhook.bind ?? "";
      const address = parseBind(bind);
      if (address === undefined) throw new Error(`invalid bind ${bind}`);
      const appDeps = {
        channels,
        secretFor: (name: string) => secrets.get(name) ?? "",
        queueFor: (name: string) => {
          const queue = queues.get(name);
          if (queue === undefined) throw new Error(`no queue for channel ${name}`);
          return queue;
        },
        clock,
        newId,
        logger,
        idempotency: state.idempotency,
        isShuttingDown: () => shuttingDown,
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      };
      const accepts = createAccepts(appDeps);
      const app = createApp(appDeps, accepts);
      const byPath = new Map<string, AcceptMessage>();
      for (const channel of channels) {
        const accept = accepts.get(channelName(channel));
        if (accept !== undefined) byPath.set(channel.webhook.path, accept);
      }
      const server = createServer(createInboundListener(byPath, getRequestListener(app.fetch), logger));
      // Bounds against slow or stalled clients (slowloris): all headers within 10 s, the
      // whole request within 30 s, idle keep-alive sockets closed after 5 s.
      server.headersTimeout = 10_000;
      server.requestTimeout = 30_000;
      server.keepAliveTimeout = 5_000;
      const port = await listen(server, address.host, address.port);
      const listener = { host: address.host, port, channels: channels.map(channelName) };
      servers.push({ server, listener });
      if (!isLoopbackHost(address.host)) {
        logger.warn(
          "bind is not loopback: the Bearer secret would cross the network in cleartext; put a TLS-terminating proxy in front and bind to 127.0.0.1",
          { bind },
        );
      }
      for (const channel of channels) {
        logger.info("listening", {
          channel: channelName(channel),
          url: `http://${address.host.includes(":") ? `[${address.host}]` : address.host}:${port}${channel.webhook.path}`,
          outbound_url: redactUrl(channel.webhook.outbound_url),
        });
      }
    }
  } catch (error) {
    for (const { server } of servers) server.close();
    // Stop the resumed jobs before their consumer and database go away.
    clearInterval(replayTimer);
    await Promise.all([...queues.values()].map((queue) => queue.drain(0)));
    await consumer.close(THREAD_CLOSE_GRACE_MS);
    await new Promise((resolve) => setImmediate(resolve));
    state.db?.close();
    throw error;
  }

  return {
    listeners: servers.map(({ listener }) => listener),
    async stop(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      shuttingDown = true;
      clearInterval(replayTimer);
      const left = (await Promise.all([...queues.values()].map((queue) => queue.drain(timeoutMs)))).flat();
      await Promise.all(
        servers.map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              server.closeAllConnections();
            }),
        ),
      );
      // Runs still in flight were given up on when the wait ended; the delivery thread gets
      // what is left of it, but at least a short grace, to close its connections and database.
      await consumer.close(Math.max(THREAD_CLOSE_GRACE_MS, deadline - Date.now()));
      // Give finished-job deletes queued for this turn their commit before closing.
      await new Promise((resolve) => setImmediate(resolve));
      state.db?.close();
      return { left, fate: state.journal.leftoverFate };
    },
  };
}

/** The consumer on the main thread, or on the delivery thread with `delivery_thread`. */
async function startConsumer(
  options: ServiceOptions,
  db: StateDb | undefined,
): Promise<Pick<DeliveryThread, "run" | "close">> {
  const { config, logger } = options;
  if (config.delivery_thread) {
    if (options.deliveryThread === undefined) {
      throw new ChannelError(
        "config_invalid",
        "delivery_thread needs dist/delivery-worker.js: start the service with node dist/node.js or webhook-channel serve",
      );
    }
    if (options.poster !== undefined || options.random !== undefined) {
      throw new Error("poster and random belong to the in-thread consumer; the delivery thread builds its own");
    }
    return startDeliveryThread({ ...options.deliveryThread, config, logger });
  }
  const built = await createNodeConsumer({
    config,
    logger,
    env: options.env ?? (() => undefined),
    db,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.newId === undefined ? {} : { newId: options.newId }),
    ...(options.random === undefined ? {} : { random: options.random }),
    ...(options.poster === undefined ? {} : { poster: options.poster }),
  });
  return { run: (job, onProgress) => built.consumer.run(job, onProgress), close: async () => built.close() };
}

function listen(server: Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      const code = "code" in error ? String(error.code) : "";
      const reason =
        code === "EADDRINUSE"
          ? "the address is already in use"
          : code === "EADDRNOTAVAIL"
            ? "the host is not an address of this machine"
            : code === "EACCES"
              ? "permission denied (ports below 1024 need privileges)"
              : errorMessage(error);
      reject(new Error(`cannot listen on ${host}:${port}: ${reason}`));
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}
