/**
 * A replica cut off from the database, not from its brain: once its lease runs out the others
 * take its conversations and its share of the brain's `max_concurrency` over, so it ends the
 * calls it has in flight (their answers could not be stored anyway) rather than hold them open
 * beside the calls of the replica that took its share. Two replicas in this process, one behind a
 * TCP gate to Postgres, and a bot over real HTTP that holds every call until released or closed.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { gateInFront, type TcpGate } from "../../support/tcp-gate.js";
import { waitFor } from "../../support/wait-for.js";

let harnesses: ServiceHarness[] = [];
let gate: TcpGate | undefined;
let bot: Server | undefined;

afterEach(async () => {
  gate?.release();
  await Promise.all(harnesses.map((harness) => harness.close()));
  await gate?.close();
  bot?.closeAllConnections();
  await new Promise((resolve) => bot?.close(resolve));
  harnesses = [];
  gate = undefined;
  bot = undefined;
});

/** A bot holding each call until `release` or until its client closes the connection. */
async function holdingBot() {
  const held = new Set<ServerResponse>();
  let most = 0;
  const closed: string[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    let body = "";
    request.on("data", (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on("end", () => {
      held.add(response);
      most = Math.max(most, held.size);
      const conversation = String((JSON.parse(body) as { conversation_id?: unknown }).conversation_id);
      response.on("close", () => {
        if (held.delete(response)) closed.push(conversation);
      });
    });
  });
  bot = server;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/bot`,
    inFlight: () => held.size,
    most: () => most,
    closed,
    release: () => {
      for (const response of held) {
        held.delete(response);
        response.writeHead(200, { "content-type": "application/json" }).end('{"text":"ok"}');
      }
    },
  };
}

async function replica(url: string, botUrl: string): Promise<ServiceHarness> {
  const harness = await startHarness(
    { delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000 } },
    {},
    {
      postgres_url_env: "DATABASE_URL",
      routes: [{ channel: "webhook", brain: "bot" }],
      brains: { bot: { type: "http", url: botUrl, max_concurrency: 2, timeout_ms: 60_000 } },
    },
    { DATABASE_URL: url },
  );
  harnesses.push(harness);
  return harness;
}

const sharing = (harness: ServiceHarness, replicas: number) =>
  waitFor(
    () =>
      harness.logs.some((line) => line.msg === "replicas share the brains' limits" && line.replicas === replicas)
        ? true
        : undefined,
    20_000,
    `a share among ${replicas} replicas`,
  );

describe("a replica cut off from the database", () => {
  it("ends its brain calls once its lease ran out, so the replica that took its share never calls past the limit", async () => {
    const brain = await holdingBot();
    const url = await createTestDatabase(inject("postgresUrl"));
    const gated = await gateInFront(url);
    gate = gated.gate;
    const cut = await replica(gated.url, brain.url);
    const kept = await replica(url, brain.url);
    await sharing(cut, 2);
    await sharing(kept, 2);
    expect((await cut.post({ sender_id: "a", text: "held" })).status).toBe(200);
    await waitFor(() => (brain.inFlight() === 1 ? true : undefined), 10_000, "the cut-off replica's call");

    gated.gate.hold();
    await waitFor(() => (brain.closed.includes("a") ? true : undefined), 30_000, "its call ended");
    await sharing(kept, 1);
    for (const sender of ["b", "c", "d"])
      expect((await kept.post({ sender_id: sender, text: "later" })).status).toBe(200);
    // The replica left takes "a" over too: its two slots are busy, and nothing else calls the bot.
    await waitFor(() => (brain.inFlight() === 2 ? true : undefined), 30_000, "two calls of the replica left");
    expect(brain.most()).toBe(2);
    brain.release();
    await waitFor(() => (kept.replies.length >= 2 ? true : undefined), 30_000, "its replies");
  }, 90_000);
});
