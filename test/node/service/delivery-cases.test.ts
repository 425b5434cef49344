/**
 * The shared delivery cases on Node: the real service (`node dist/node.js`) and a real
 * receiver on port 0, once with `state_dir` (SQLite) and once in memory. With SQLite a restart
 * is `kill -9` and a new process over the same state_dir; the receiver stays up across it. In
 * memory a restart loses what was pending by design, so that runner has none.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe } from "vitest";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import {
  DELIVERY_CASES_ADMIN_ENV,
  DELIVERY_CASES_ADMIN_SECRET,
  DELIVERY_CASES_PATH,
  DELIVERY_CASES_SECRET,
  DELIVERY_CASES_SECRET_ENV,
  type DeliveryHarness,
  deliveryCasesConfig,
  recordPost,
} from "../../shared/delivery-cases.js";
import { deliveryCases } from "../../shared/delivery-cases-suite.js";
import { timelineCases } from "../../shared/timeline-cases.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";

// "thread": SQLite with the delivery thread, whose runs cross a thread boundary (the receiver
// circuit's admission with them).
for (const mode of ["sqlite", "memory", "thread"] as const) {
  describe(`state: ${mode}`, () => {
    let receiver: Receiver | undefined;
    let service: Spawned | undefined;
    let stateDir = "";
    let harness: DeliveryHarness;

    beforeAll(async () => {
      receiver = await startReceiver({ port: 0, status: (reply) => recordPost(harness, reply.body) });
      const extra: Record<string, unknown> = {};
      if (mode !== "memory") {
        stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-cases-"));
        extra.state_dir = stateDir;
      }
      if (mode === "thread") extra.delivery_thread = true;
      const config = await writeTempConfig(deliveryCasesConfig(receiver.url, extra));
      let origin = "";
      const start = async () => {
        service = spawnNode("dist/node.js", ["--config", config], {
          [DELIVERY_CASES_SECRET_ENV]: DELIVERY_CASES_SECRET,
          [DELIVERY_CASES_ADMIN_ENV]: DELIVERY_CASES_ADMIN_SECRET,
        });
        origin = new URL(await listeningUrl(service)).origin;
      };
      await start();
      const restart = async () => {
        service?.child.kill("SIGKILL");
        await service?.exited;
        await start();
      };
      harness = {
        seen: [],
        answer: () => 200,
        async send({ conversationId, text }) {
          const response = await fetch(`${origin}${DELIVERY_CASES_PATH}`, {
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
          fetch(`${origin}${path}`, {
            ...init,
            headers: { authorization: `Bearer ${DELIVERY_CASES_ADMIN_SECRET}` },
          }),
        ...(mode === "memory" ? {} : { restart }),
      };
    }, 30_000);

    afterAll(async () => {
      service?.child.kill("SIGKILL");
      await service?.exited;
      await receiver?.close();
      if (stateDir !== "") await rm(stateDir, { recursive: true, force: true });
    });

    deliveryCases(`the Node service (${mode})`, () => harness, 30_000, { restarts: mode !== "memory" });
    timelineCases(`the Node service (${mode})`, () => harness, 30_000);
  });
}
