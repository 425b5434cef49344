/**
 * A replica stopped gracefully under steady traffic: the other replica goes on storing messages
 * of its conversations, which the stopping one must not keep reading into its lanes, or its drain
 * would never end and its stop would cut off whatever was under way at the timeout. Two replicas
 * in this process on one Postgres, a bot that takes a while per call.
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { waitFor } from "../../support/wait-for.js";

let harnesses: ServiceHarness[] = [];
let bot: JsonTestServer | undefined;

afterEach(async () => {
  await Promise.all(harnesses.map((harness) => harness.close()));
  harnesses = [];
  await bot?.close();
  bot = undefined;
});

describe("a replica's graceful stop under steady traffic", () => {
  it("ends with what it held, while the other replica stores more of its conversation, which then runs in order", async () => {
    bot = await startJsonServer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 40));
      return { status: 200, body: { text: "ok" } };
    });
    const url = await createTestDatabase(inject("postgresUrl"));
    const start = () =>
      startHarness(
        {},
        {},
        {
          postgres_url_env: "DATABASE_URL",
          routes: [{ channel: "webhook", brain: "bot" }],
          brains: { bot: { type: "http", url: `${bot?.origin}/bot` } },
        },
        { DATABASE_URL: url },
      );
    const first = await start();
    const second = await start();
    harnesses = [first, second];
    const accepted: string[] = [];
    const post = async (harness: ServiceHarness, text: string) => {
      const response = await harness.post({ sender_id: "steady", text });
      expect(response.status).toBe(200);
      accepted.push(((await response.json()) as { message_id: string }).message_id);
    };
    // The first replica takes the conversation; the second stores the rest, faster than one
    // conversation's replies go, and tells the first of each.
    await post(first, "m0");
    let feeding = true;
    const feeder = (async () => {
      for (let index = 1; feeding; index += 1) {
        await post(second, `m${index}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    })();
    await waitFor(() => (first.replies.length >= 3 ? true : undefined), 10_000, "the first replica answering");
    const stopped = await first.service.stop(3_000);
    feeding = false;
    await feeder;
    expect(stopped.left).toEqual([]);

    await waitFor(
      () => (first.replies.length + second.replies.length >= accepted.length ? true : undefined),
      30_000,
      "every reply",
    );
    const replies = [...first.replies, ...second.replies].map(
      (reply) => reply.body as { in_reply_to: string; sequence: number },
    );
    replies.sort((a, b) => a.sequence - b.sequence);
    expect(replies.map((reply) => reply.sequence)).toEqual(accepted.map((_, index) => index + 1));
    expect(replies.map((reply) => reply.in_reply_to)).toEqual(accepted);
    harnesses = [second];
  }, 60_000);
});
