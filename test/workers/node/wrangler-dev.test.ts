import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  DELIVERY_CASES_SECRET,
  DELIVERY_CASES_SECRET_ENV,
  type DeliveryHarness,
  deliveryCases,
  deliveryCasesConfig,
  recordPost,
} from "../../shared/delivery-cases.js";
import {
  caseRequest,
  checkAnswer,
  INBOUND_CASES,
  INBOUND_CASES_CONFIG,
  INBOUND_CASES_SECRET,
  INBOUND_CASES_SECRET_ENV,
} from "../../shared/inbound-cases.js";
import { freePort } from "../../support/free-port.js";
import { runCliCaptured } from "../../support/run-cli-captured.js";
import { spawnWranglerDev, stopWranglerDev } from "../../support/spawn-wrangler-dev.js";

/** The admin API's secret in this wrangler dev, and the variable the CLI reads it from. */
const ADMIN_SECRET = "wrangler-dev-admin-secret-0123456789abcdefghijkl";
/** A channel whose receiver refuses each message's first reply with a 400: a dead letter at once. */
const REFUSING_PATH = "/refused-once";

/** One POST the receiver got. */
interface Received {
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: Record<string, unknown>;
}

let receiver: Server;
let receiverPort = 0;
const received: Received[] = [];
/** Messages whose first reply the refusing receiver already turned down. */
const refused = new Set<string>();
let wrangler: ChildProcess | undefined;
/** What the current wrangler dev printed so far. */
let printed: () => string = () => "";
let origin = "";
let workDir = "";
let startWrangler: () => Promise<void> = () => Promise.resolve();
let harness: DeliveryHarness;
/**
 * True when this wrangler dev process's inbound queue handed every message it accepted to its
 * consumer, as its log lines count them (`POST /path 200 OK`, `QUEUE <inbound> acked/total`).
 */
const queueDrained = (): boolean => {
  const accepted = printed().match(/POST \S+ 200 OK/g)?.length ?? 0;
  let consumed = 0;
  for (const match of printed().matchAll(/QUEUE webhook-channel-inbound \d+\/(\d+)/g)) consumed += Number(match[1]);
  return consumed >= accepted;
};

async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined> | T | undefined,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (wrangler?.exitCode !== null && wrangler?.exitCode !== undefined) {
      throw new Error(`wrangler dev exited (${wrangler.exitCode}) while waiting for ${what}:\n${printed()}`);
    }
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; wrangler dev said:\n${printed()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function stopWrangler(): Promise<void> {
  return wrangler === undefined ? Promise.resolve() : stopWranglerDev(wrangler);
}

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as Record<string, unknown>;
      if (request.url === "/cases") {
        const status = recordPost(harness, body);
        // "hang": the request stays open, unanswered, until the Worker gives up on it.
        if (status !== "hang") response.writeHead(status).end();
        return;
      }
      if (request.url === REFUSING_PATH && !refused.has(String(body.in_reply_to))) {
        refused.add(String(body.in_reply_to));
        response.writeHead(400).end();
        return;
      }
      received.push({ path: request.url ?? "", headers: request.headers, body });
      response.writeHead(204).end();
    });
  });
  receiverPort = await new Promise<number>((resolve) => {
    receiver.listen(0, "127.0.0.1", () => {
      const address = receiver.address();
      resolve(typeof address === "object" && address !== null ? address.port : 0);
    });
  });

  // The bundled config.json cannot know the receiver's port: CONFIG_JSON replaces it, as
  // the README describes. --env-file also keeps a developer's .dev.vars out of the test.
  workDir = await mkdtemp(join(tmpdir(), "webhook-channel-e2e-"));
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
  origin = `http://127.0.0.1:${port}`;
  startWrangler = async () => {
    const spawned = spawnWranglerDev({ port, inspectorPort, workDir, envFile });
    wrangler = spawned.child;
    printed = spawned.output;

    await waitFor(
      "GET /healthz",
      async () => {
        try {
          const response = await fetch(`${origin}/healthz`);
          return response.status === 200 ? true : undefined;
        } catch {
          return undefined;
        }
      },
      40_000,
    );
  };
  await startWrangler();
  harness = {
    seen: [],
    answer: () => 200,
    async send({ conversationId, text }) {
      const response = await fetch(`${origin}/cases`, {
        method: "POST",
        headers: { authorization: `Bearer ${DELIVERY_CASES_SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: "u1", conversation_id: conversationId, text }),
      });
      if (response.status !== 200)
        throw new Error(`wrangler dev answered ${response.status}: ${await response.text()}`);
      return ((await response.json()) as { message_id: string }).message_id;
    },
    admin: (path, init = {}) =>
      fetch(`${origin}${path}`, { ...init, headers: { authorization: `Bearer ${ADMIN_SECRET}` } }),
    async restart() {
      // Miniflare keeps its queues in memory (the platform's are durable): restart only once
      // every message sent so far left the local queue for its conversation's object.
      await waitFor("the local queue to be drained", () => (queueDrained() ? true : undefined), 20_000);
      await stopWrangler();
      await startWrangler();
    },
  };
}, 60_000);

afterAll(async () => {
  await stopWrangler();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  if (workDir !== "") await rm(workDir, { recursive: true, force: true });
});

describe("wrangler dev, end to end", () => {
  it("accepts a message with the Bearer secret and POSTs the reply to the receiver", async () => {
    const response = await fetch(`${origin}/webhook`, {
      method: "POST",
      headers: { authorization: `Bearer ${INBOUND_CASES_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "e2e-user", text: "hello from the e2e test", conversation_id: "e2e-1" }),
    });
    expect(response.status).toBe(200);
    const accepted = (await response.json()) as { status: string; message_id: string; conversation_id: string };
    expect(accepted).toMatchObject({ status: "accepted", conversation_id: "e2e-1" });

    const reply = await waitFor(
      "the reply at the receiver",
      () => received.find((entry) => entry.body.in_reply_to === accepted.message_id),
      20_000,
    );
    expect(reply.path).toBe("/replies");
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(reply.headers["user-agent"]).toMatch(/^webhook-channel\//);
    expect(reply.headers["webhook-id"]).toBe(reply.body.message_id);
    expect(reply.body).toMatchObject({
      conversation_id: "e2e-1",
      recipient_id: "e2e-user",
      text: "hello from the e2e test",
      brain: "echo",
      sequence: 1,
    });
    expect(String(reply.body.created_at)).toMatch(/Z$/);
  });

  it("holds to the shared inbound cases over real sockets", async () => {
    const failures: string[] = [];
    for (const testCase of INBOUND_CASES) {
      const problem = await checkAnswer(await fetch(caseRequest(origin, testCase.request)), testCase.expect);
      if (problem !== undefined) failures.push(`${testCase.name}: ${problem}`);
    }
    expect(failures).toEqual([]);
  });
});

describe("the admin API under wrangler dev, through the CLI's --url", () => {
  it("lists a dead letter the dead-letter queue's consumer kept, replays it to the receiver, and shows both in its timeline", async () => {
    const response = await fetch(`${origin}${REFUSING_PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${INBOUND_CASES_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "admin-user", text: "refused once" }),
    });
    expect(response.status).toBe(200);
    const { message_id: id } = (await response.json()) as { message_id: string };
    const cli = (args: string[]) =>
      runCliCaptured(["dead-letters", ...args, "--url", origin], { WEBHOOK_ADMIN_SECRET: ADMIN_SECRET });

    const listed = await waitFor(
      "the dead letter in the admin API",
      async () => {
        const run = await cli(["list", "--json"]);
        if (run.code !== 0) throw new Error(`dead-letters list failed (${run.code}): ${run.err}`);
        const { items } = JSON.parse(run.out) as {
          items: { id: string; stage: string; error: { status: number | null } }[];
        };
        return items.find((item) => item.id === id);
      },
      20_000,
    );
    expect(listed).toMatchObject({ stage: "reply", error: { status: 400 } });
    const table = await cli(["list"]);
    expect(table.out).toContain(id);

    const replay = await cli(["replay", "--id", id]);
    expect(replay.code).toBe(0);
    const reply = await waitFor(
      "the replayed reply at the receiver",
      () => received.find((entry) => entry.path === REFUSING_PATH && entry.body.in_reply_to === id),
      20_000,
    );
    // The replay takes its conversation's next number: the refused attempt had 1.
    expect(reply.body).toMatchObject({ text: "refused once", sequence: 2 });
    const after = await cli(["list", "--json"]);
    expect((JSON.parse(after.out) as { items: { id: string }[] }).items.map((item) => item.id)).not.toContain(id);

    // The message's timeline, in the timeline shards: its death, the replay and the delivery after it.
    const timeline = await waitFor(
      "the delivery in the message's timeline",
      async () => {
        const shown = await fetch(`${origin}/admin/messages/${id}`, {
          headers: { authorization: `Bearer ${ADMIN_SECRET}` },
        });
        const body = (await shown.json()) as { status: string; events: { type: string }[] };
        return body.status === "delivered" ? body : undefined;
      },
      20_000,
    );
    expect(timeline.events.map((event) => event.type)).toEqual([
      "accepted",
      "brain_call",
      "reply",
      "attempt",
      "dead_letter",
      "replayed",
      "attempt",
      "delivered",
    ]);
  });
});

deliveryCases("the Worker under wrangler dev", () => harness, 30_000);
