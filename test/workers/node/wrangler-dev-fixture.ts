/**
 * One `wrangler dev` of the Worker for wrangler-dev.test.ts, with a node:http receiver for its
 * replies: the inbound cases' channels, the delivery cases' channel and a channel whose receiver
 * refuses each message's first reply, on one configuration. Starting wrangler dev takes seconds,
 * so every test of that file shares this one; the delivery cases' restart stops and starts it.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DELIVERY_CASES_SECRET,
  DELIVERY_CASES_SECRET_ENV,
  type DeliveryHarness,
  deliveryCasesConfig,
  recordPost,
} from "../../shared/delivery-cases.js";
import { INBOUND_CASES_CONFIG, INBOUND_CASES_SECRET, INBOUND_CASES_SECRET_ENV } from "../../shared/inbound-cases.js";
import { freePort } from "../../support/free-port.js";
import { spawnWranglerDev, stopWranglerDev } from "../../support/spawn-wrangler-dev.js";

/** The admin API's secret in this wrangler dev, and the variable the CLI reads it from. */
export const ADMIN_SECRET = "wrangler-dev-admin-secret-0123456789abcdefghijkl";
/** A channel whose receiver refuses each message's first reply with a 400: a dead letter at once. */
export const REFUSING_PATH = "/refused-once";

/** One POST the receiver got. */
export interface Received {
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Record<string, unknown>;
}

/** The running wrangler dev and its receiver; {@link WranglerDev.start} in `beforeAll`, stop in `afterAll`. */
export class WranglerDev {
  /** Where wrangler dev listens, once started. */
  origin = "";
  /** Every POST the receiver answered with a 204: all but the delivery cases' and the refused ones. */
  readonly received: Received[] = [];
  /** The delivery cases' harness over this wrangler dev. */
  readonly harness: DeliveryHarness;

  #receiver: Server | undefined;
  /** Messages whose first reply the refusing receiver already turned down. */
  readonly #refused = new Set<string>();
  #wrangler: ChildProcess | undefined;
  /** What the current wrangler dev printed so far. */
  #printed: () => string = () => "";
  #workDir = "";
  #startWrangler: () => Promise<void> = () => Promise.resolve();

  constructor() {
    this.harness = {
      seen: [],
      answer: () => 200,
      send: async ({ conversationId, text }) => {
        const response = await fetch(`${this.origin}/cases`, {
          method: "POST",
          headers: { authorization: `Bearer ${DELIVERY_CASES_SECRET}`, "content-type": "application/json" },
          body: JSON.stringify({ sender_id: "u1", conversation_id: conversationId, text }),
        });
        if (response.status !== 200)
          throw new Error(`wrangler dev answered ${response.status}: ${await response.text()}`);
        return ((await response.json()) as { message_id: string }).message_id;
      },
      admin: (path, init = {}) =>
        fetch(`${this.origin}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_SECRET}` } }),
      restart: async () => {
        // Miniflare keeps its queues in memory (the platform's are durable): restart only once
        // every message sent so far left the local queue for its conversation's object.
        await this.waitFor("the local queue to be drained", () => (this.#queueDrained() ? true : undefined), 20_000);
        await this.#stopWrangler();
        await this.#startWrangler();
      },
    };
  }

  /**
   * True when this wrangler dev process's inbound queue handed every message it accepted to its
   * consumer, as its log lines count them (`POST /path 200 OK`, `QUEUE <inbound> acked/total`).
   */
  #queueDrained(): boolean {
    const accepted = this.#printed().match(/POST \S+ 200 OK/g)?.length ?? 0;
    let consumed = 0;
    for (const match of this.#printed().matchAll(/QUEUE webhook-channel-inbound \d+\/(\d+)/g)) {
      consumed += Number(match[1]);
    }
    return consumed >= accepted;
  }

  /** Polls `probe` until it gives a value; fails, with what wrangler dev printed, if it exits or times out. */
  async waitFor<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs: number): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const wrangler = this.#wrangler;
      if (wrangler?.exitCode !== null && wrangler?.exitCode !== undefined) {
        throw new Error(`wrangler dev exited (${wrangler.exitCode}) while waiting for ${what}:\n${this.#printed()}`);
      }
      const value = await probe();
      if (value !== undefined) return value;
      if (Date.now() > deadline) {
        throw new Error(`timed out waiting for ${what}; wrangler dev said:\n${this.#printed()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  #stopWrangler(): Promise<void> {
    return this.#wrangler === undefined ? Promise.resolve() : stopWranglerDev(this.#wrangler);
  }

  /** Starts the receiver, then wrangler dev, and waits until it answers GET /healthz. */
  async start(): Promise<void> {
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
        if (request.url === "/cases") {
          const status = recordPost(this.harness, body);
          // "hang": the request stays open, unanswered, until the Worker gives up on it.
          if (status !== "hang") response.writeHead(status).end();
          return;
        }
        if (request.url === REFUSING_PATH && !this.#refused.has(String(body.in_reply_to))) {
          this.#refused.add(String(body.in_reply_to));
          response.writeHead(400).end();
          return;
        }
        this.received.push({ path: request.url ?? "", headers: request.headers, body });
        response.writeHead(204).end();
      });
    });
    this.#receiver = receiver;
    const receiverPort = await new Promise<number>((resolve) => {
      receiver.listen(0, "127.0.0.1", () => {
        const address = receiver.address();
        resolve(typeof address === "object" && address !== null ? address.port : 0);
      });
    });

    // The bundled config.json cannot know the receiver's port: CONFIG_JSON replaces it, as
    // the README describes. --env-file also keeps a developer's .dev.vars out of the test.
    const workDir = await mkdtemp(join(tmpdir(), "webhook-channel-e2e-"));
    this.#workDir = workDir;
    const outbound = `http://127.0.0.1:${receiverPort}/replies`;
    const cases = deliveryCasesConfig(`http://127.0.0.1:${receiverPort}/cases`);
    const config = {
      channels: [
        ...INBOUND_CASES_CONFIG.channels.map((channel) => ({
          ...channel,
          webhook: { ...channel.webhook, outbound_url: outbound },
        })),
        ...cases.channels,
        {
          type: "webhook",
          name: "refused",
          token_env: INBOUND_CASES_SECRET_ENV,
          webhook: { path: REFUSING_PATH, outbound_url: `http://127.0.0.1:${receiverPort}${REFUSING_PATH}` },
        },
      ],
      routes: [...INBOUND_CASES_CONFIG.routes, ...cases.routes, { channel: "refused", brain: "echo" }],
      admin: { token_env: "WEBHOOK_ADMIN_SECRET" },
    };
    const envFile = join(workDir, "test.env");
    await writeFile(
      envFile,
      [
        `${INBOUND_CASES_SECRET_ENV}=${INBOUND_CASES_SECRET}`,
        `${DELIVERY_CASES_SECRET_ENV}=${DELIVERY_CASES_SECRET}`,
        `WEBHOOK_ADMIN_SECRET=${ADMIN_SECRET}`,
        `CONFIG_JSON='${JSON.stringify(config)}'`,
        "",
      ].join("\n"),
    );

    const port = await freePort();
    const inspectorPort = await freePort();
    this.origin = `http://127.0.0.1:${port}`;
    this.#startWrangler = async () => {
      const spawned = spawnWranglerDev({ port, inspectorPort, workDir, envFile });
      this.#wrangler = spawned.child;
      this.#printed = spawned.output;

      await this.waitFor(
        "GET /healthz",
        async () => {
          try {
            const response = await fetch(`${this.origin}/healthz`);
            return response.status === 200 ? true : undefined;
          } catch {
            return undefined;
          }
        },
        40_000,
      );
    };
    await this.#startWrangler();
  }

  /** Stops whatever {@link WranglerDev.start} got to start, even if it failed halfway. */
  async stop(): Promise<void> {
    await this.#stopWrangler();
    const receiver = this.#receiver;
    if (receiver !== undefined) {
      receiver.closeAllConnections();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
    if (this.#workDir !== "") await rm(this.#workDir, { recursive: true, force: true });
  }
}
