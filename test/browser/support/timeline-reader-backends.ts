/**
 * The services the timeline readers' scenario runs on, as one table: the Node service keeping its
 * timeline in memory, in state_dir's SQLite file and in Postgres, and the Worker under
 * `wrangler dev` keeping it in its Durable Objects. Each has the admin API on, the same channel
 * secret and the same quick retries, and posts its replies to the receiver the scenario gives it.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inject } from "vitest";
import { SECRET, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { startWranglerDev } from "./wrangler-dev.js";

/** The admin secret of every backend's service. */
export const READER_ADMIN_SECRET = "timeline-readers-admin-secret-0123456789ab";

/** The secret a client sends to every backend's channel, at {@link READER_CHANNEL_PATH}. */
export const READER_CHANNEL_SECRET = SECRET;

/** Where every backend's channel listens. */
export const READER_CHANNEL_PATH = "/webhook";

/**
 * Retries a few tens of milliseconds apart, so that an outage of a POST or two passes at once,
 * and attempts enough that only a refusal (a 4xx) makes a dead letter.
 */
const DELIVERY = { initial_delay_ms: 50, max_delay_ms: 400, max_attempts: 1000, max_age_ms: 600_000 };

/** One backend's running service. */
export interface ReaderService {
  /** `http://127.0.0.1:<port>`: the channel, the admin API and the console. */
  readonly origin: string;
  stop(): Promise<void>;
}

/** A way to run the service, by the name a test reports it under. */
export interface ReaderBackend {
  readonly name: string;
  /** Starts the service with its replies posted to `outboundUrl`; resolves once it answers. */
  start(outboundUrl: string): Promise<ReaderService>;
}

/** The Node service in this process, with `state` (state_dir or postgres_url_env) added to its configuration. */
async function startNode(
  outboundUrl: string,
  state: Record<string, unknown>,
  env: Record<string, string>,
): Promise<ReaderService> {
  const harness = await startHarness(
    { outbound_url: outboundUrl, delivery: DELIVERY },
    {},
    { admin: { token_env: "ADMIN_SECRET" }, ...state },
    { ADMIN_SECRET: READER_ADMIN_SECRET, ...env },
  );
  return { origin: harness.baseUrl, stop: () => harness.close() };
}

/** Every backend the scenario runs on, in the order it runs them. */
export const READER_BACKENDS: readonly ReaderBackend[] = [
  { name: "Node, in memory", start: (url) => startNode(url, {}, {}) },
  {
    name: "Node, SQLite (state_dir)",
    async start(url) {
      const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-readers-"));
      const service = await startNode(url, { state_dir: stateDir }, {});
      return {
        origin: service.origin,
        async stop() {
          await service.stop();
          await rm(stateDir, { recursive: true, force: true });
        },
      };
    },
  },
  {
    name: "Node, Postgres (postgres_url_env)",
    async start(url) {
      const database = await createTestDatabase(inject("postgresUrl"));
      return await startNode(url, { postgres_url_env: "DATABASE_URL" }, { DATABASE_URL: database });
    },
  },
  {
    name: "Workers, wrangler dev",
    async start(url) {
      const config = {
        channels: [
          { type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: url, delivery: DELIVERY } },
        ],
        routes: [{ channel: "webhook", brain: "echo" }],
        admin: { token_env: "WEBHOOK_ADMIN_SECRET" },
      };
      const wrangler = await startWranglerDev({
        WEBHOOK_SECRET: READER_CHANNEL_SECRET,
        WEBHOOK_ADMIN_SECRET: READER_ADMIN_SECRET,
        CONFIG_JSON: JSON.stringify(config),
      });
      return { origin: wrangler.origin, stop: () => wrangler.stop() };
    },
  },
];
