/**
 * The Worker under `wrangler dev`, end to end over real sockets: a message's reply at a real
 * receiver, the shared inbound and delivery cases, and the admin API through the CLI's --url.
 * The wrangler dev they share, its configuration and its receiver are in wrangler-dev-fixture.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { deliveryCases } from "../../shared/delivery-cases-suite.js";
import { caseRequest, checkAnswer, INBOUND_CASES, INBOUND_CASES_SECRET } from "../../shared/inbound-cases.js";
import { runCliCaptured } from "../../support/run-cli-captured.js";
import { ADMIN_SECRET, REFUSING_PATH, WranglerDev } from "./wrangler-dev-fixture.js";

const dev = new WranglerDev();

beforeAll(() => dev.start(), 60_000);

afterAll(() => dev.stop());

describe("wrangler dev, end to end", () => {
  it("accepts a message with the Bearer secret and POSTs the reply to the receiver", async () => {
    const response = await fetch(`${dev.origin}/webhook`, {
      method: "POST",
      headers: { authorization: `Bearer ${INBOUND_CASES_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "e2e-user", text: "hello from the e2e test", conversation_id: "e2e-1" }),
    });
    expect(response.status).toBe(200);
    const accepted = (await response.json()) as { status: string; message_id: string; conversation_id: string };
    expect(accepted).toMatchObject({ status: "accepted", conversation_id: "e2e-1" });

    const reply = await dev.waitFor(
      "the reply at the receiver",
      () => dev.received.find((entry) => entry.body.in_reply_to === accepted.message_id),
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
      const problem = await checkAnswer(await fetch(caseRequest(dev.origin, testCase.request)), testCase.expect);
      if (problem !== undefined) failures.push(`${testCase.name}: ${problem}`);
    }
    expect(failures).toEqual([]);
  });
});

describe("the admin API under wrangler dev, through the CLI's --url", () => {
  it("lists a dead letter the dead-letter queue's consumer kept, replays it to the receiver, and shows both in its timeline", async () => {
    const response = await fetch(`${dev.origin}${REFUSING_PATH}`, {
      method: "POST",
      headers: { authorization: `Bearer ${INBOUND_CASES_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "admin-user", text: "refused once" }),
    });
    expect(response.status).toBe(200);
    const { message_id: id } = (await response.json()) as { message_id: string };
    const cli = (args: string[]) =>
      runCliCaptured(["dead-letters", ...args, "--url", dev.origin], { WEBHOOK_ADMIN_SECRET: ADMIN_SECRET });

    const listed = await dev.waitFor(
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
    const reply = await dev.waitFor(
      "the replayed reply at the receiver",
      () => dev.received.find((entry) => entry.path === REFUSING_PATH && entry.body.in_reply_to === id),
      20_000,
    );
    // The replay takes its conversation's next number: the refused attempt had 1.
    expect(reply.body).toMatchObject({ text: "refused once", sequence: 2 });
    const after = await cli(["list", "--json"]);
    expect((JSON.parse(after.out) as { items: { id: string }[] }).items.map((item) => item.id)).not.toContain(id);

    // The message's timeline, in the timeline shards: its death, the replay and the delivery after it.
    const timeline = await dev.waitFor(
      "the delivery in the message's timeline",
      async () => {
        const shown = await fetch(`${dev.origin}/admin/messages/${id}`, {
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
      "reply",
      "attempt",
      "delivered",
    ]);
  });
});

deliveryCases("the Worker under wrangler dev", () => dev.harness, 30_000);
