/**
 * The shared delivery cases on Postgres (`postgres_url_env`): one replica of the built service,
 * and three replicas on one database with the clients' messages spread over all three (each
 * message to the next replica). A restart is `kill -9` of every replica and a new set over the
 * same database: the new ones take the conversations over once the old leases ran out.
 */
import { afterAll, beforeAll, describe, inject } from "vitest";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import {
  DELIVERY_CASES_ADMIN_ENV,
  DELIVERY_CASES_ADMIN_SECRET,
  DELIVERY_CASES_SECRET,
  DELIVERY_CASES_SECRET_ENV,
  type DeliveryHarness,
  deliveryCasesConfig,
  recordPost,
} from "../../shared/delivery-cases.js";
import { deliveryCases } from "../../shared/delivery-cases-suite.js";
import { timelineCases } from "../../shared/timeline-cases.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";

for (const count of [1, 3]) {
  describe(`Postgres, ${count} replica(s)`, () => {
    let receiver: Receiver | undefined;
    let replicas: Spawned[] = [];
    let harness: DeliveryHarness;

    beforeAll(async () => {
      receiver = await startReceiver({ port: 0, status: (reply) => recordPost(harness, reply.body) });
      const databaseUrl = await createTestDatabase(inject("postgresUrl"));
      const config = await writeTempConfig(deliveryCasesConfig(receiver.url, { postgres_url_env: "DATABASE_URL" }));
      const env = {
        [DELIVERY_CASES_SECRET_ENV]: DELIVERY_CASES_SECRET,
        [DELIVERY_CASES_ADMIN_ENV]: DELIVERY_CASES_ADMIN_SECRET,
        DATABASE_URL: databaseUrl,
      };
      let urls: string[] = [];
      const start = async () => {
        replicas = Array.from({ length: count }, () => spawnNode("dist/node.js", ["--config", config], env));
        urls = await Promise.all(replicas.map((replica) => listeningUrl(replica)));
      };
      await start();
      let sent = 0;
      harness = {
        seen: [],
        answer: () => 200,
        async send({ conversationId, text }) {
          const url = urls[sent % urls.length] ?? "";
          sent += 1;
          const response = await fetch(url, {
            method: "POST",
            headers: { authorization: `Bearer ${DELIVERY_CASES_SECRET}`, "content-type": "application/json" },
            body: JSON.stringify({ sender_id: "u1", conversation_id: conversationId, text }),
          });
          if (response.status !== 200) {
            throw new Error(`the service answered ${response.status}: ${await response.text()}`);
          }
          return ((await response.json()) as { message_id: string }).message_id;
        },
        admin: (path, init = {}) =>
          fetch(`${new URL(urls[0] ?? "").origin}${path}`, {
            ...init,
            headers: { authorization: `Bearer ${DELIVERY_CASES_ADMIN_SECRET}` },
          }),
        async restart() {
          for (const replica of replicas) replica.child.kill("SIGKILL");
          await Promise.all(replicas.map((replica) => replica.exited));
          await start();
        },
      };
    }, 30_000);

    afterAll(async () => {
      for (const replica of replicas) replica.child.kill("SIGKILL");
      await Promise.all(replicas.map((replica) => replica.exited));
      await receiver?.close();
    });

    deliveryCases(`the Node service on Postgres (${count} replica(s))`, () => harness, 30_000);
    timelineCases(`the Node service on Postgres (${count} replica(s))`, () => harness, 30_000);
  });
}
