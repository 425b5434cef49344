import type { Clock, IdGenerator } from "../../core/clock.js";
import type { Config } from "../../core/config/config-schema.js";
import type { Logger } from "../../core/log/logger.js";
import type { Poster } from "../../core/outbound/poster.js";
import type { ListenerLimits } from "../listener/listener-limits.js";
import type { Telemetry } from "../telemetry/telemetry.js";

/** What the Node service is started from. */
export interface ServiceOptions {
  readonly config: Config;
  /**
   * Inbound secret per channel name (the value of its `token_env`); the caller has checked
   * that none is empty. Read per request, so that a reload's secrets apply at once.
   */
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
  /**
   * The timeline writer thread's module (dist/timeline-writer.js): with `state_dir` the message
   * timeline is written there; without it, on the event loop.
   */
  readonly timelineWriter?: URL;
  /**
   * Bounds on slow clients, for tests that watch them with real sockets in a few seconds;
   * the service runs with DEFAULT_LISTENER_LIMITS, which docs/security.md lists.
   */
  readonly listenerLimits?: Partial<ListenerLimits>;
  /** The configuration file (absolute), named in the replay command of each dead-letter line. */
  readonly configPath?: string;
  /** Between two `progress` lines; 10 s unless a test shortens it. */
  readonly progressIntervalMs?: number;
  /**
   * With `postgres_url_env`: how long a replica's lease lasts, the time before others take over
   * the conversations of a replica that stopped renewing it. 5 s unless a test changes it.
   */
  readonly replicaLeaseMs?: number;
  /**
   * Where spans go (inbound requests; brain calls and reply POSTs of the in-thread consumer, the
   * delivery thread starting its own): none by default, and then nothing is traced. The caller
   * owns it and shuts it down after the stop.
   */
  readonly telemetry?: Telemetry;
}
