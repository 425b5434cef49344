/**
 * The receiver circuit's operator events with two replicas of the built service on one Postgres:
 * they share the circuit's row, so the receiver goes down and comes back once for the service,
 * and the replica whose write made each change is the only one that tells the operator URL,
 * though the other, holding replies too, learns of it (by its refresh of the row, or its own
 * next report) and logs it when it learns by the refresh.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { configDocument } from "../../support/configs.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { postAccepted } from "../../support/post-accepted.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { replyBody } from "../../support/reply-checks.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "replica-events-secret-0123456789";
const OPS_SECRET = `whsec_${Buffer.from("o".repeat(32)).toString("base64")}`;

let replicas: Spawned[] = [];
let receiver: Receiver | undefined;
let operator: JsonTestServer | undefined;

afterEach(async () => {
  for (const replica of replicas) replica.child.kill("SIGKILL");
  await Promise.all(replicas.map((replica) => replica.exited));
  await receiver?.close();
  await operator?.close();
  replicas = [];
  receiver = undefined;
  operator = undefined;
});

const post = (url: string, conversation: string): Promise<string> => postAccepted(url, SECRET, conversation, "hello");

describe("operator events of two replicas on Postgres", () => {
  it("tell the receiver's going down and coming back once, from the replica that made each change", async () => {
    const databaseUrl = await createTestDatabase(inject("postgresUrl"));
    let down = true;
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({
      port: 0,
      status: () => (down ? 503 : 200),
      onReply: (reply) => {
        if (!down) replies.push(reply);
      },
    });
    operator = await startJsonServer(() => ({ status: 200 }));
    const config = await writeTempConfig(
      configDocument(
        {
          bind: "127.0.0.1:0",
          outbound_url: receiver.url,
          delivery: { circuit_failures: 2, initial_delay_ms: 50, max_delay_ms: 300, max_attempts: 1000 },
        },
        {
          postgres_url_env: "DATABASE_URL",
          operator_events: { url: `${operator.origin}/ops`, signing_secret_env: "OPS_SECRET" },
        },
      ),
    );
    const env = { WEBHOOK_SECRET: SECRET, DATABASE_URL: databaseUrl, OPS_SECRET };
    replicas = [0, 1].map(() => spawnNode("dist/node.js", ["--config", config], env));
    const urls = await Promise.all(replicas.map((replica) => listeningUrl(replica)));
    // Conversations on both replicas, so that both hold replies for the receiver.
    const ids = await Promise.all(
      ["a", "b", "c", "d"].map((conversation, index) => post(urls[index % 2] ?? "", conversation)),
    );
    const types = () => (operator?.requests ?? []).map((request) => (request.body as { type: string }).type);
    await waitFor(() => (types().includes("receiver.down") ? true : undefined), 10_000, "receiver.down");
    // Both replicas hold replies for the receiver: both watch the shared row, and learn when it is up.
    const holding = async (url: string) => {
      const report = (await (await fetch(new URL("/readyz", url))).json()) as {
        receivers_down?: { waiting: number }[];
      };
      return (report.receivers_down?.[0]?.waiting ?? 0) > 0;
    };
    await waitFor(
      async () => ((await Promise.all(urls.map(holding))).every(Boolean) ? true : undefined),
      10_000,
      "both replicas to hold replies",
    );
    down = false;
    await waitFor(
      () => {
        const answered = new Set(replies.map((reply) => replyBody(reply).in_reply_to));
        return ids.every((id) => answered.has(id)) ? true : undefined;
      },
      20_000,
      "every reply once the receiver is back",
    );
    await waitFor(() => (types().includes("receiver.up") ? true : undefined), 10_000, "receiver.up");
    // A stop sends what the replicas still hold: every event either would send is in by then.
    for (const replica of replicas) replica.child.kill("SIGTERM");
    expect(await Promise.all(replicas.map((replica) => replica.exited))).toEqual([0, 0]);
    expect(types().sort()).toEqual(["receiver.down", "receiver.up"]);
  }, 60_000);
});
