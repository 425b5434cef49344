import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { createApp } from "../core/app/create-app.js";
import { createBrains } from "../core/brain/create-brains.js";
import { type Clock, type IdGenerator, randomId, systemClock } from "../core/clock/clock.js";
import { isLoopbackHost, parseBind } from "../core/config/bind-address.js";
import type { ChannelConfig, Config } from "../core/config/config-schema.js";
import { channelName } from "../core/config/validate-config.js";
import { createConsumer } from "../core/consumer/create-consumer.js";
import { createMemoryConversationStore } from "../core/conversation/memory-conversation-store.js";
import type { Poster } from "../core/delivery/poster.js";
import { errorMessage, isChannelError } from "../core/errors/channel-error.js";
import type { Logger } from "../core/log/logger.js";
import { createMemoryQueue, type MemoryQueue } from "./memory-queue.js";
import { createUndiciPoster } from "./undici-poster.js";

/** What the Node service is started from. */
export interface ServiceOptions {
  readonly config: Config;
  /** Inbound secret per channel name; the caller has checked that none is empty. */
  readonly secrets: ReadonlyMap<string, string>;
  readonly logger: Logger;
  readonly clock?: Clock;
  readonly newId?: IdGenerator;
  /** Outbound client; default a keep-alive undici pool. */
  readonly poster?: Poster & { close?: () => Promise<void> };
}

/** One listening socket and the channels it serves. */
export interface Listener {
  readonly host: string;
  readonly port: number;
  readonly channels: readonly string[];
}

/** A started service. */
export interface RunningService {
  readonly listeners: readonly Listener[];
  /**
   * Graceful stop: new inbound requests get 503 `shutting_down`, accepted messages finish
   * (up to `timeoutMs`), then the sockets close. Returns the ids left unfinished.
   */
  stop(timeoutMs: number): Promise<string[]>;
}

/** Seconds a shut-out or refused client is told to wait. */
const RETRY_AFTER_SECONDS = 5;

/**
 * Starts the Node runtime: one bounded queue per channel, the consumer, and one HTTP server
 * per distinct bind (channels that share a bind share a server).
 */
export async function startService(options: ServiceOptions): Promise<RunningService> {
  const { config, logger, secrets } = options;
  const clock = options.clock ?? systemClock;
  const newId = options.newId ?? randomId;
  const poster = options.poster ?? createUndiciPoster();
  const consumer = createConsumer({
    config,
    brains: createBrains(config),
    poster,
    store: createMemoryConversationStore({ now: () => clock.now() }),
    clock,
    newId,
    logger,
  });

  const queues = new Map<string, MemoryQueue>();
  for (const channel of config.channels) {
    const name = channelName(channel);
    queues.set(
      name,
      createMemoryQueue({
        capacity: channel.webhook.buffer_capacity,
        retryAfterSeconds: 1,
        handle: (message) => consumer.process(message),
        onError: (message, error) => {
          const fields = isChannelError(error)
            ? { code: error.code, retryable: error.retryable, ...error.details }
            : { code: "internal_error" };
          logger.error(`message not answered: ${errorMessage(error)}`, {
            channel: message.channel,
            message_id: message.id,
            conversation_id: message.message.conversationId,
            ...fields,
          });
        },
      }),
    );
  }

  let shuttingDown = false;
  const groups = new Map<string, ChannelConfig[]>();
  for (const channel of config.channels) {
    const group = groups.get(channel.webhook.bind);
    if (group === undefined) groups.set(channel.webhook.bind, [channel]);
    else group.push(channel);
  }

  const servers: { server: ReturnType<typeof createAdaptorServer>; listener: Listener }[] = [];
  try {
    for (const [bind, channels] of groups) {
      const address = parseBind(bind);
      if (address === undefined) throw new Error(`invalid bind ${bind}`);
      const app = createApp({
        channels,
        secretFor: (name) => secrets.get(name) ?? "",
        queueFor: (name) => {
          const queue = queues.get(name);
          if (queue === undefined) throw new Error(`no queue for channel ${name}`);
          return queue;
        },
        clock,
        newId,
        logger,
        isShuttingDown: () => shuttingDown,
        retryAfterSeconds: RETRY_AFTER_SECONDS,
      });
      const server = createAdaptorServer({ fetch: app.fetch });
      // Bounds against slow or stalled clients (slowloris): all headers within 10 s, the
      // whole request within 30 s, idle keep-alive sockets closed after 5 s.
      if ("headersTimeout" in server) {
        server.headersTimeout = 10_000;
        server.requestTimeout = 30_000;
        server.keepAliveTimeout = 5_000;
      }
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
          outbound_url: channel.webhook.outbound_url,
        });
      }
    }
  } catch (error) {
    for (const { server } of servers) server.close();
    throw error;
  }

  return {
    listeners: servers.map(({ listener }) => listener),
    async stop(timeoutMs) {
      shuttingDown = true;
      const left = (await Promise.all([...queues.values()].map((queue) => queue.drain(timeoutMs)))).flat();
      await Promise.all(
        servers.map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.close(() => resolve());
              if ("closeAllConnections" in server) server.closeAllConnections();
            }),
        ),
      );
      await poster.close?.();
      return left;
    },
  };
}

function listen(server: ReturnType<typeof createAdaptorServer>, host: string, port: number): Promise<number> {
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
