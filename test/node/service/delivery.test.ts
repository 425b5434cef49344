import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { failure } from "../../support/failure.js";
import { freePort } from "../../support/free-port.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

/** Quick retries so the tests take milliseconds, not minutes. */
const FAST = { initial_delay_ms: 20, max_delay_ms: 200 };
let harness: ServiceHarness | undefined;
let extraReceiver: Receiver | undefined;

afterEach(async () => {
  await harness?.close();
  await extraReceiver?.close();
  harness = undefined;
  extraReceiver = undefined;
});

const bodyOf = (reply: ReceivedReply) => reply.body as { message_id: string; sequence: number; text: string };
const headerOf = (reply: ReceivedReply, name: string) => String(reply.headers[name] ?? "");

function scripted(...answers: (number | "hang" | { status: number; headers: Record<string, string> })[]) {
  let index = 0;
  return () => answers[Math.min(index++, answers.length - 1)] ?? 200;
}

describe("reply delivery on Node", () => {
  it("retries 500 twice then succeeds: three attempts with one webhook-id", async () => {
    harness = await startHarness({ delivery: FAST }, { status: scripted(500, 500, 200) });
    expect((await harness.post({ sender_id: "a", text: "x" })).status).toBe(200);
    const replies = harness.replies;
    await waitFor(() => (replies.length >= 3 ? true : undefined), 5_000, "three attempts");
    // A window for a fourth attempt that should not come.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(replies).toHaveLength(3);
    const ids = new Set(replies.map((reply) => headerOf(reply, "webhook-id")));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toBe(bodyOf(replies[0] as ReceivedReply).message_id);
    const timestamps = replies.map((reply) => Number(headerOf(reply, "webhook-timestamp")));
    expect(timestamps.every((timestamp) => Number.isInteger(timestamp) && timestamp > 1e9)).toBe(true);
  });

  it("waits at least Retry-After before the next attempt after a 429", async () => {
    const times: number[] = [];
    harness = await startHarness(
      { delivery: { ...FAST, max_delay_ms: 5_000 } },
      {
        status: scripted({ status: 429, headers: { "retry-after": "1" } }, 200),
        onReply: () => times.push(Date.now()),
      },
    );
    await harness.post({ sender_id: "a", text: "x" });
    await waitFor(() => (times.length >= 2 ? true : undefined), 5_000, "the second attempt");
    expect((times[1] ?? 0) - (times[0] ?? 0)).toBeGreaterThanOrEqual(990);
  });

  it("does not retry a 400: one attempt, then a dead letter", async () => {
    harness = await startHarness({ delivery: FAST }, { status: () => 400 });
    await harness.post({ sender_id: "a", text: "x" });
    const logs = harness.logs;
    const dead = await waitFor(
      () => logs.find((line) => String(line.msg).startsWith("dead letter")),
      5_000,
      "a dead letter",
    );
    expect(dead).toMatchObject({ level: "error", status: 400, attempts: 1, code: "delivery_failed" });
    expect(JSON.stringify(dead)).not.toContain('"x"');
    // A window for a retry that should not come.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(harness.replies).toHaveLength(1);
  });

  it("logs that the receiver is gone on 410", async () => {
    harness = await startHarness({ delivery: FAST }, { status: () => 410 });
    await harness.post({ sender_id: "a", text: "x" });
    const logs = harness.logs;
    await waitFor(() => logs.find((line) => String(line.msg).includes("410 Gone")), 5_000, "the 410 line");
  });

  it("treats a redirect as a failure and never follows it", async () => {
    harness = await startHarness(
      { delivery: { ...FAST, max_attempts: 2 } },
      { status: () => ({ status: 302, headers: { location: "http://127.0.0.1:9/elsewhere" } }) },
    );
    await harness.post({ sender_id: "a", text: "x" });
    const logs = harness.logs;
    await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter")), 5_000, "a dead letter");
    expect(harness.replies).toHaveLength(1);
  });

  it("gives up on a receiver that hangs after timeout_ms and retries", async () => {
    harness = await startHarness({ delivery: { ...FAST, timeout_ms: 150 } }, { status: scripted("hang", 200) });
    await harness.post({ sender_id: "a", text: "x" });
    const replies = harness.replies;
    await waitFor(() => (replies.length >= 2 ? true : undefined), 5_000, "the retry after a timeout");
    expect(headerOf(replies[0] as ReceivedReply, "webhook-id")).toBe(
      headerOf(replies[1] as ReceivedReply, "webhook-id"),
    );
    expect(harness.logs).toContainEqual(
      expect.objectContaining({ level: "warn", msg: expect.stringContaining("150 ms") }),
    );
  });

  it("retries while the connection is refused and delivers once the receiver is up", async () => {
    const port = await freePort();
    harness = await startHarness({ delivery: FAST, outbound_url: `http://127.0.0.1:${port}/replies` });
    await harness.post({ sender_id: "a", text: "late" });
    const logs = harness.logs;
    await waitFor(() => logs.find((line) => line.level === "warn"), 5_000, "a failed attempt");
    const received: ReceivedReply[] = [];
    extraReceiver = await startReceiver({ port, onReply: (reply) => received.push(reply) });
    const reply = await waitFor(() => received[0], 5_000, "the delivery");
    expect(bodyOf(reply).text).toBe("late");
  });

  it("dead-letters after max_attempts", async () => {
    harness = await startHarness({ delivery: { ...FAST, max_attempts: 3 } }, { status: () => 503 });
    await harness.post({ sender_id: "a", text: "x" });
    const logs = harness.logs;
    const dead = await waitFor(
      () => logs.find((line) => String(line.msg).startsWith("dead letter")),
      5_000,
      "a dead letter",
    );
    expect(dead).toMatchObject({ attempts: 3, status: 503 });
    expect(harness.replies).toHaveLength(3);
  });

  it("signs every attempt so that standardwebhooks verifies it", async () => {
    const secret = `whsec_${Buffer.from("a".repeat(32)).toString("base64")}`;
    harness = await startHarness(
      { delivery: FAST, signing_secret_env: "SIGNING_SECRET" },
      { status: scripted(500, 200) },
      {},
      { SIGNING_SECRET: secret },
    );
    await harness.post({ sender_id: "a", text: "signed" });
    const replies = harness.replies;
    await waitFor(() => (replies.length >= 2 ? true : undefined), 5_000, "two attempts");
    const webhook = new Webhook(secret);
    for (const reply of replies) {
      const headers = reply.headers as Record<string, string>;
      expect(webhook.verify(reply.raw, headers)).toMatchObject({ text: "signed" });
    }
    const tampered = { ...(replies[0]?.headers as Record<string, string>) };
    expect(() => webhook.verify(replies[0]?.raw.replace("signed", "forged") ?? "", tampered)).toThrow();
  });

  it("signs with both secrets during a rotation", async () => {
    const oldSecret = `whsec_${Buffer.from("o".repeat(32)).toString("base64")}`;
    const newSecret = `whsec_${Buffer.from("n".repeat(32)).toString("base64")}`;
    harness = await startHarness(
      { signing_secret_env: "SIGNING_SECRET" },
      {},
      {},
      { SIGNING_SECRET: `${oldSecret} ${newSecret}` },
    );
    await harness.post({ sender_id: "a", text: "rotating" });
    const replies = harness.replies;
    const reply = await waitFor(() => replies[0], 5_000, "the reply");
    const headers = reply.headers as Record<string, string>;
    expect(headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(new Webhook(oldSecret).verify(reply.raw, headers)).toMatchObject({ text: "rotating" });
    expect(new Webhook(newSecret).verify(reply.raw, headers)).toMatchObject({ text: "rotating" });
  });

  it("refuses to start with a signing secret that is not whsec_", async () => {
    await expect(
      startHarness({ signing_secret_env: "SIGNING_SECRET" }, {}, {}, { SIGNING_SECRET: "plain" }),
    ).rejects.toThrow(/whsec_/);
  });

  it("refuses to start with an outbound token that ends in a newline, naming only the variable", async () => {
    const error = await failure(
      startHarness({ outbound_token_env: "OUT_TOKEN" }, {}, {}, { OUT_TOKEN: "receiver-token\n" }),
    );
    expect(error.code).toBe("config_invalid");
    expect(error.message).toMatch(/OUT_TOKEN starts or ends with whitespace/);
    expect(error.message).not.toContain("receiver-token");
  });

  it("sends the outbound Bearer token when outbound_token_env is set", async () => {
    harness = await startHarness({ outbound_token_env: "OUT_TOKEN" }, {}, {}, { OUT_TOKEN: "receiver-token" });
    await harness.post({ sender_id: "a", text: "x" });
    const replies = harness.replies;
    const reply = await waitFor(() => replies[0], 5_000, "the reply");
    expect(reply.headers.authorization).toBe("Bearer receiver-token");
    expect(JSON.stringify(harness.logs)).not.toContain("receiver-token");
  });

  it("keeps every conversation in order with sequence 1..n under random failures", async () => {
    let seed = 42;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed / 2 ** 31;
    };
    harness = await startHarness(
      { delivery: { initial_delay_ms: 5, max_delay_ms: 40, max_attempts: 50 }, buffer_capacity: 200 },
      { status: () => (random() < 0.3 ? 500 : 200) },
    );
    const sent = new Map<string, string[]>();
    for (let index = 0; index < 100; index += 1) {
      const conversation = `c${index % 10}`;
      const text = `${conversation}-${Math.floor(index / 10)}`;
      sent.set(conversation, [...(sent.get(conversation) ?? []), text]);
      expect((await harness.post({ sender_id: "s", conversation_id: conversation, text })).status).toBe(200);
    }
    const logs = harness.logs;
    await waitFor(
      () => (logs.filter((line) => line.msg === "reply delivered").length >= 100 ? true : undefined),
      20_000,
      "100 delivered replies",
    );
    expect(logs.filter((line) => line.level === "error")).toEqual([]);
    const replies = harness.replies;
    const byId = new Map<string, { conversation_id: string; text: string; sequence: number }>();
    for (const reply of replies) byId.set(headerOf(reply, "webhook-id"), reply.body as never);
    expect(byId.size).toBe(100);
    for (const [conversation, texts] of sent) {
      const ordered = [...byId.values()]
        .filter((body) => body.conversation_id === conversation)
        .sort((left, right) => left.sequence - right.sequence);
      expect(ordered.map((body) => body.text)).toEqual(texts);
      expect(ordered.map((body) => body.sequence)).toEqual(texts.map((_, index) => index + 1));
    }
    // The last attempt of each reply is the one that succeeded; in arrival order they match
    // the acceptance order of each conversation.
    const arrivals = new Map<string, string[]>();
    const seenIds = new Set<string>();
    for (const reply of [...replies].reverse()) {
      const id = headerOf(reply, "webhook-id");
      if (seenIds.has(id)) continue;
      seenIds.add(id);
      const body = reply.body as { conversation_id: string; text: string };
      arrivals.set(body.conversation_id, [body.text, ...(arrivals.get(body.conversation_id) ?? [])]);
    }
    for (const [conversation, texts] of sent) expect(arrivals.get(conversation)).toEqual(texts);
  });

  it("answers a repeated Idempotency-Key with the first message_id and replies once", async () => {
    harness = await startHarness();
    const first = await harness.post({ sender_id: "a", text: "once" }, { "idempotency-key": "order-17" });
    const second = await harness.post({ sender_id: "a", text: "once" }, { "idempotency-key": "order-17" });
    const firstBody = (await first.json()) as { message_id: string };
    expect(second.status).toBe(200);
    expect(await second.json()).toEqual({ status: "accepted", message_id: firstBody.message_id, conversation_id: "a" });
    const other = await harness.post({ sender_id: "a", text: "twice" }, { "idempotency-key": "order-18" });
    expect(((await other.json()) as { message_id: string }).message_id).not.toBe(firstBody.message_id);
    const replies = harness.replies;
    await waitFor(() => (replies.length >= 2 ? true : undefined), 5_000, "two replies");
    // A window for a third reply that should not come.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(replies.map((reply) => bodyOf(reply).text).sort()).toEqual(["once", "twice"]);
  });

  it("rejects an Idempotency-Key over 256 characters", async () => {
    harness = await startHarness();
    const response = await harness.post({ sender_id: "a", text: "x" }, { "idempotency-key": "k".repeat(257) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "invalid_message", errors: [{ field: "Idempotency-Key" }] });
  });
});
