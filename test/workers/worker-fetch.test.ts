import { env as poolEnv } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDurablePendingJobStore } from "../../src/workers/conversation/durable-pending-job-store.js";
import worker from "../../src/workers/index.js";
import { readInboundBody } from "../../src/workers/queue-body.js";
import { createFakeQueue } from "./support/fake-queue.js";
import { captureLogs } from "./support/fake-receiver.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(() => {
  vi.restoreAllMocks();
});

function post(body: unknown, headers: Record<string, string> = {}): Request {
  return new Request("https://channel.example/webhook", {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
}

describe("the Worker's fetch handler", () => {
  it("limits failed authentications per CF-Connecting-IP: 429 after 20, whatever the secret, other addresses free", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const bytes = crypto.getRandomValues(new Uint8Array(2));
    const guesser = `198.18.${bytes[0] ?? 0}.${bytes[1] ?? 0}`;
    const message = { sender_id: "u1", text: "hi" };
    for (let attempt = 0; attempt < 20; attempt += 1) {
      const wrong = post(message, { authorization: "Bearer wrong", "cf-connecting-ip": guesser });
      expect((await worker.fetch(wrong, env)).status).toBe(401);
    }
    const blocked = await worker.fetch(post(message, { "cf-connecting-ip": guesser }), env);
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(((await blocked.json()) as { code: string }).code).toBe("too_many_requests");
    const other = await worker.fetch(post(message, { "cf-connecting-ip": guesser.replace("198.18.", "198.19.") }), env);
    expect(other.status).not.toBe(429);
  });

  it("answers 503 buffer_full with Retry-After when the queue refuses the message", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }, { inbound: createFakeQueue({ refuse: true }) });
    const response = await worker.fetch(post({ sender_id: "u1", text: "hi" }), env);
    expect(response.status).toBe(503);
    expect(response.headers.get("retry-after")).toBe("5");
    expect(response.headers.get("content-type")).toBe("application/problem+json");
    expect(((await response.json()) as { code: string }).code).toBe("buffer_full");
    expect(lines.some((line) => line.level === "error" && line.msg === "the inbound queue refused a message")).toBe(
      true,
    );
  });

  it("logs the configuration's warnings at warn, once, but not a bind's or a buffer's (a Worker has neither)", async () => {
    const { lines } = captureLogs();
    const config = channelConfig({
      // With the timeline recorded (admin), a buffer above its bound is a warning on Node.
      webhook: { bind: "0.0.0.0:8090", buffer_capacity: 20_000 },
      delivery: { max_attempts: 4, circuit_failures: 5 },
      top: { admin: { token_env: "ADMIN_SECRET" } },
    });
    const env = testEnv(config, { WEBHOOK_SECRET: SECRET, ADMIN_SECRET: "worker-fetch-admin-secret-0123456789" });
    for (let request = 0; request < 2; request += 1) await worker.fetch(post({ sender_id: "u1", text: "hi" }), env);
    const warnings = lines.filter((line) => line.level === "warn" && String(line.msg).startsWith("configuration"));
    expect(warnings.map((line) => line.msg)).toEqual([
      expect.stringContaining("channels[0].webhook.delivery.max_attempts: 4 is below circuit_failures (5)"),
    ]);
  });

  it("reads CONFIG_JSON given as an object (a [vars] table)", async () => {
    captureLogs();
    const env = { ...testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET }), CONFIG_JSON: channelConfig() };
    const response = await worker.fetch(post({ sender_id: "u1", text: "hi" }), env);
    expect(response.status).toBe(200);
    expect(env.INBOUND.sent).toHaveLength(1);
  });

  it("uses the bundled config.json without CONFIG_JSON", async () => {
    const { lines } = captureLogs();
    const env = { ...testEnv({}, { WEBHOOK_SECRET: SECRET }), CONFIG_JSON: undefined };
    const response = await worker.fetch(post({ sender_id: "u1", text: "hi" }), env);
    expect(response.status).toBe(200);
    expect(lines.find((line) => line.msg === "configuration loaded")?.source).toBe("config.json (bundled)");
  });

  it("answers 500 config_invalid, and logs each problem with its path, for an invalid configuration", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig({ webhook: { mode: "push" } }), { WEBHOOK_SECRET: SECRET });
    for (const path of ["/webhook", "/healthz"]) {
      const response = await worker.fetch(new Request(`https://channel.example${path}`), env);
      expect(response.status).toBe(500);
      expect(response.headers.get("content-type")).toBe("application/problem+json");
      const problem = (await response.json()) as { code: string; detail: string };
      expect(problem.code).toBe("config_invalid");
      // The public answer names nothing of the configuration; the logs do.
      expect(problem.detail).not.toContain("mode");
    }
    const problems = lines.filter(
      (line) => line.level === "error" && String(line.msg).startsWith("invalid configuration"),
    );
    expect(problems.map((line) => line.msg)).toEqual([
      expect.stringContaining("channels[0].webhook.mode: The webhook channel takes no `mode` field"),
    ]);
  });

  it("answers 500 when CONFIG_JSON is not JSON", async () => {
    const { lines } = captureLogs();
    const env = { ...testEnv({}, { WEBHOOK_SECRET: SECRET }), CONFIG_JSON: "{ nope" };
    expect((await worker.fetch(post({ sender_id: "u1", text: "hi" }), env)).status).toBe(500);
    expect(lines.some((line) => String(line.msg).includes("CONFIG_JSON is not valid JSON"))).toBe(true);
  });

  it("answers 500 and names the variable, never a value, when a secret is missing", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: "" });
    const response = await worker.fetch(post({ sender_id: "u1", text: "hi" }), env);
    expect(response.status).toBe(500);
    const line = lines.find((entry) => String(entry.msg).includes("WEBHOOK_SECRET"));
    expect(line?.msg).toContain("wrangler secret put WEBHOOK_SECRET");
    expect(line?.msg).toContain("a new inbound secret (npx webhook-channel secret makes one)");
  });

  it("says what a missing signing secret holds, not how to make an inbound secret", async () => {
    const { lines } = captureLogs();
    const config = channelConfig({ webhook: { signing_secret_env: "REPLY_SIGNING" } });
    const env = testEnv(config, { WEBHOOK_SECRET: SECRET });
    expect((await worker.fetch(post({ sender_id: "u1", text: "hi" }), env)).status).toBe(500);
    const line = lines.find((entry) => String(entry.msg).includes("REPLY_SIGNING"));
    expect(line?.msg).toContain("wrangler secret put REPLY_SIGNING");
    expect(line?.msg).toContain("whsec_");
    expect(line?.msg).not.toContain("npx webhook-channel secret");
  });

  it("refuses two channels on one path: on Workers bind does not apply", async () => {
    const { lines } = captureLogs();
    const config = channelConfig();
    const channels = config.channels as Record<string, unknown>[];
    const second = {
      ...channels[0],
      name: "second",
      webhook: { path: "/webhook", bind: "127.0.0.1:9000", outbound_url: "https://x.example/" },
    };
    const env = testEnv(
      {
        ...config,
        channels: [...channels, second],
        routes: [...(config.routes as unknown[]), { channel: "second", brain: "echo" }],
      },
      { WEBHOOK_SECRET: SECRET },
    );
    expect((await worker.fetch(post({ sender_id: "u1", text: "hi" }), env)).status).toBe(500);
    expect(lines.some((line) => String(line.msg).includes("channels[1].webhook.path"))).toBe(true);
  });

  it("never logs the secret, even at debug", async () => {
    const { lines } = captureLogs();
    const env = testEnv(channelConfig({ top: { log_level: "debug" } }), { WEBHOOK_SECRET: SECRET });
    await worker.fetch(post({ sender_id: "u1", text: "hi" }), env);
    await worker.fetch(post({ sender_id: "u1", text: "hi" }, { authorization: "Bearer wrong" }), env);
    expect(lines.length).toBeGreaterThan(0);
    expect(JSON.stringify(lines)).not.toContain(SECRET);
  });

  it("keeps a message too large for a queue message in its conversation's Durable Object", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const conversation = freshConversation();
    const text = "x".repeat(300_000);
    const response = await worker.fetch(post({ sender_id: "u1", conversation_id: conversation, text }), env);
    expect(response.status).toBe(200);
    const { message_id: id } = (await response.json()) as { message_id: string };

    const body = readInboundBody(env.INBOUND.sent[0]);
    expect(body).toEqual({ stored: { id, channel: "webhook", conversationId: conversation } });
    expect(JSON.stringify(env.INBOUND.sent[0]).length).toBeLessThan(1000);
    const job =
      body !== undefined && "stored" in body
        ? await createDurablePendingJobStore(poolEnv.CONVERSATIONS, poolEnv.DEAD_LETTER_STORE).get(body.stored)
        : undefined;
    expect(job?.message.message.text).toBe(text);
  });

  it("answers a repeated Idempotency-Key with the first message_id and queues the message once", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const key = `key-${crypto.randomUUID()}`;
    const first = await worker.fetch(post({ sender_id: "u1", text: "hi" }, { "idempotency-key": key }), env);
    const second = await worker.fetch(post({ sender_id: "u1", text: "hi" }, { "idempotency-key": key }), env);
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    const a = (await first.json()) as { message_id: string };
    const b = (await second.json()) as { message_id: string };
    expect(b.message_id).toBe(a.message_id);
    expect(env.INBOUND.sent).toHaveLength(1);
  });

  it("refuses a repeated Idempotency-Key with another body 422 idempotency_key_reused and queues nothing more", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const key = `key-${crypto.randomUUID()}`;
    const first = await worker.fetch(post({ sender_id: "u1", text: "hi" }, { "idempotency-key": key }), env);
    const other = await worker.fetch(post({ sender_id: "u1", text: "bye" }, { "idempotency-key": key }), env);
    expect(first.status).toBe(200);
    expect(other.status).toBe(422);
    expect(other.headers.get("content-type")).toBe("application/problem+json");
    expect(await other.json()).toMatchObject({ code: "idempotency_key_reused", status: 422 });
    expect(env.INBOUND.sent).toHaveLength(1);
    const again = await worker.fetch(post({ sender_id: "u1", text: "hi" }, { "idempotency-key": key }), env);
    expect(((await again.json()) as { message_id: string }).message_id).toBe(
      ((await first.json()) as { message_id: string }).message_id,
    );
  });

  it("forgets an Idempotency-Key whose message the queue refused, so the client's retry is accepted", async () => {
    captureLogs();
    const key = `key-${crypto.randomUUID()}`;
    const refusing = testEnv(
      channelConfig(),
      { WEBHOOK_SECRET: SECRET },
      { inbound: createFakeQueue({ refuse: true }) },
    );
    expect(
      (await worker.fetch(post({ sender_id: "u1", text: "hi" }, { "idempotency-key": key }), refusing)).status,
    ).toBe(503);
    const working = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const retried = await worker.fetch(post({ sender_id: "u1", text: "hi" }, { "idempotency-key": key }), working);
    expect(retried.status).toBe(200);
    expect(working.INBOUND.sent).toHaveLength(1);
    expect(readInboundBody(working.INBOUND.sent[0])).toMatchObject({ idempotencyKey: key });
  });
});
