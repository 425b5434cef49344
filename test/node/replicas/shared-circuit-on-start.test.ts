/**
 * A replica on Postgres that starts, or runs, while the shared circuit row says the receiver is
 * down (another replica, or its own last run, took it down): its runs are admitted by that row,
 * so it posts nothing before the probe's time, and when the receiver answers it again the row
 * comes up (`/readyz`, `receiver.up`), whichever replica's POST was answered.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { configDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { postAccepted } from "../../support/post-accepted.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "shared-circuit-secret-0123456789";
const OPS_SECRET = `whsec_${Buffer.from("o".repeat(32)).toString("base64")}`;

let replicas: Spawned[] = [];
let receiver: Receiver | undefined;
let operator: JsonTestServer | undefined;
let down = true;
let posts = 0;

afterEach(async () => {
  for (const replica of replicas) replica.child.kill("SIGKILL");
  await Promise.all(replicas.map((replica) => replica.exited));
  await receiver?.close();
  await operator?.close();
  replicas = [];
  receiver = undefined;
  operator = undefined;
});

interface Readyz {
  readonly receivers_down?: readonly { readonly waiting: number }[];
}
const readyz = async (url: string): Promise<Readyz> => (await (await fetch(new URL("/readyz", url))).json()) as Readyz;
const eventTypes = () => (operator?.requests ?? []).map((request) => (request.body as { type: string }).type);

/** A configuration whose first probe comes `probeMs` after the receiver went down. */
async function setup(probeMs: number): Promise<{ start: () => Promise<{ spawned: Spawned; url: string }> }> {
  const databaseUrl = await createTestDatabase(inject("postgresUrl"));
  down = true;
  posts = 0;
  receiver = await startReceiver({
    port: 0,
    status: () => {
      posts += 1;
      return down ? 503 : 200;
    },
  });
  operator = await startJsonServer(() => ({ status: 200 }));
  const config = await writeTempConfig(
    configDocument(
      {
        bind: "127.0.0.1:0",
        outbound_url: receiver.url,
        delivery: { circuit_failures: 1, initial_delay_ms: probeMs, max_delay_ms: 2 * probeMs, max_attempts: 1000 },
      },
      {
        postgres_url_env: "DATABASE_URL",
        shutdown_timeout_ms: 1_000,
        operator_events: { url: `${operator.origin}/ops`, signing_secret_env: "OPS_SECRET" },
      },
    ),
  );
  const env = { WEBHOOK_SECRET: SECRET, DATABASE_URL: databaseUrl, OPS_SECRET };
  return {
    start: async () => {
      const spawned = spawnNode("dist/node.js", ["--config", config], env);
      replicas.push(spawned);
      return { spawned, url: await listeningUrl(spawned) };
    },
  };
}

/** Four conversations held by `url`'s replica, the receiver down. */
async function fourHeld(url: string): Promise<void> {
  for (const conversation of ["a", "b", "c", "d"]) await postAccepted(url, SECRET, conversation, "hello");
  await waitFor(() => (eventTypes().includes("receiver.down") ? true : undefined), 10_000, "receiver.down");
  await waitFor(
    async () => ((await readyz(url)).receivers_down?.[0]?.waiting === 4 ? true : undefined),
    10_000,
    "four conversations held",
  );
}

describe("a replica and the shared circuit row", () => {
  it("started while the row says down, holds what it takes over and posts nothing before the probe's time", async () => {
    const { start } = await setup(60_000);
    const first = await start();
    await fourHeld(first.url);
    first.spawned.child.kill("SIGTERM");
    await first.spawned.exited;
    const before = posts;
    const second = await start();
    await waitFor(
      async () => ((await readyz(second.url)).receivers_down?.[0]?.waiting === 4 ? true : undefined),
      10_000,
      "the four conversations held by the replica started",
    );
    expect(posts - before).toBe(0);
  }, 60_000);

  it("running beside the replica that took the receiver down, holds its new replies", async () => {
    const { start } = await setup(60_000);
    const first = await start();
    await fourHeld(first.url);
    const other = await start();
    await waitFor(
      async () => ((await readyz(other.url)).receivers_down?.length === 1 ? true : undefined),
      10_000,
      "the other replica to know the receiver down",
    );
    const before = posts;
    for (const conversation of ["e", "f", "g", "h"]) await postAccepted(other.url, SECRET, conversation, "hello");
    await waitFor(
      async () => ((await readyz(other.url)).receivers_down?.[0]?.waiting === 4 ? true : undefined),
      10_000,
      "its four conversations held",
    );
    expect(posts - before).toBe(0);
  }, 60_000);

  it("brings the row up when a replica started after the receiver came back has its replies answered", async () => {
    const { start } = await setup(5_000);
    const first = await start();
    await fourHeld(first.url);
    first.spawned.child.kill("SIGTERM");
    await first.spawned.exited;
    down = false;
    const second = await start();
    await waitFor(() => (eventTypes().includes("receiver.up") ? true : undefined), 20_000, "receiver.up");
    await waitFor(
      async () => (((await readyz(second.url)).receivers_down ?? []).length === 0 ? true : undefined),
      10_000,
      "no receiver down",
    );
  }, 60_000);
});
