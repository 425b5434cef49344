/**
 * The auth-failure limit on Durable Objects, inside workerd: the limiter over the pool's real
 * AUTH_FAILURES namespace, alone and behind the core app with the Worker's client address
 * (`CF-Connecting-IP`). Every test uses its own channel name, so objects are never shared.
 */
import { runDurableObjectAlarm } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { createApp } from "../../src/core/app/create-app.js";
import type { AuthFailureLimit } from "../../src/core/auth-limit/auth-failure-limiter.js";
import { limitKey } from "../../src/core/auth-limit/auth-failure-limiter.js";
import { validateConfig } from "../../src/core/config/validate-config.js";
import { createJsonLogger } from "../../src/core/log/logger.js";
import { createDurableAuthFailureLimiter } from "../../src/workers/auth-failures/durable-auth-failure-limiter.js";

const LIMIT: AuthFailureLimit = { max: 20, windowMs: 60_000 };
const SECRET = "workers-auth-limit-secret";

/** A clock the test moves by hand. */
function manualClock(start = Date.UTC(2025, 0, 1, 10)) {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

let channels = 0;
const freshChannel = () => `auth-limit-${Date.now()}-${++channels}`;

describe("the Durable Object auth-failure limiter", () => {
  it("refuses an address at 20 failures, with Retry-After, the first refusal marked, other addresses free", async () => {
    const clock = manualClock();
    const limiter = createDurableAuthFailureLimiter(env.AUTH_FAILURES, clock);
    const channel = freshChannel();
    for (let index = 0; index < 19; index += 1) await limiter.recordFailure(channel, "198.51.100.7", LIMIT);
    expect(await limiter.check(channel, "198.51.100.7", LIMIT)).toBeUndefined();
    await limiter.recordFailure(channel, "198.51.100.7", LIMIT);
    expect(await limiter.check(channel, "198.51.100.7", LIMIT)).toEqual({ retryAfterSeconds: 60, first: true });
    clock.advance(15_000);
    expect(await limiter.check(channel, "198.51.100.7", LIMIT)).toEqual({ retryAfterSeconds: 45, first: false });
    expect(await limiter.check(channel, "198.51.100.8", LIMIT)).toBeUndefined();
    expect(await limiter.check(freshChannel(), "198.51.100.7", LIMIT)).toBeUndefined();
    clock.advance(45_000);
    expect(await limiter.check(channel, "198.51.100.7", LIMIT)).toBeUndefined();
  });

  it("counts the failures of every isolate together", async () => {
    const clock = manualClock();
    const channel = freshChannel();
    const first = createDurableAuthFailureLimiter(env.AUTH_FAILURES, clock);
    const second = createDurableAuthFailureLimiter(env.AUTH_FAILURES, clock);
    for (let index = 0; index < 10; index += 1) {
      await first.recordFailure(channel, "2001:db8:1:2::1", LIMIT);
      // Another address of the same /64: the same client.
      await second.recordFailure(channel, "2001:db8:1:2::2", LIMIT);
    }
    expect(await first.check(channel, "2001:db8:1:2::3", LIMIT)).toMatchObject({ retryAfterSeconds: 60 });
  });

  it("forgets an address when its alarm runs, one window after its last failure", async () => {
    const clock = manualClock();
    const channel = freshChannel();
    const limiter = createDurableAuthFailureLimiter(env.AUTH_FAILURES, clock);
    for (let index = 0; index < 20; index += 1) await limiter.recordFailure(channel, "198.51.100.7", LIMIT);
    const stub = env.AUTH_FAILURES.get(env.AUTH_FAILURES.idFromName(limitKey(channel, "198.51.100.7")));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await limiter.check(channel, "198.51.100.7", LIMIT)).toBeUndefined();
  });
});

describe("the core app with the Durable Object limiter and CF-Connecting-IP", () => {
  function app() {
    const channel = freshChannel();
    const result = validateConfig({
      channels: [
        {
          type: "webhook",
          name: channel,
          token_env: "WEBHOOK_SECRET",
          webhook: { outbound_url: "https://receiver.example/replies", auth_failure_limit: { max: 3, window_s: 30 } },
        },
      ],
      routes: [{ channel, brain: "echo" }],
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const lines: Record<string, unknown>[] = [];
    const clock = manualClock();
    let next = 0;
    const served = createApp({
      channels: result.config.channels,
      secretsFor: () => [SECRET],
      queueFor: () => ({ enqueue: () => undefined }),
      clock,
      newId: () => `id-${++next}`,
      logger: createJsonLogger((line) => lines.push(JSON.parse(line) as Record<string, unknown>), "info"),
      authFailures: createDurableAuthFailureLimiter(env.AUTH_FAILURES, clock),
      peerAddress: (request) => request.headers.get("cf-connecting-ip"),
    });
    const post = (secret: string, address: string) =>
      served.request("/webhook", {
        method: "POST",
        headers: {
          authorization: `Bearer ${secret}`,
          "content-type": "application/json",
          "cf-connecting-ip": address,
        },
        body: JSON.stringify({ sender_id: "alice", text: "hello" }),
      });
    return { post, clock, lines, channel };
  }

  it("answers 429 with Retry-After to an address over the limit, whatever its secret, and 200 to others", async () => {
    const { post, clock, lines, channel } = app();
    for (let index = 0; index < 3; index += 1) expect((await post("wrong-guess", "203.0.113.5")).status).toBe(401);
    const refused = await post(SECRET, "203.0.113.5");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("30");
    expect(await refused.json()).toMatchObject({ code: "too_many_requests", status: 429 });
    expect((await post(SECRET, "203.0.113.6")).status).toBe(200);
    expect(lines.filter((line) => line.level === "warn")).toEqual([
      expect.objectContaining({ channel, address: "203.0.113.5", retry_after_s: 30 }),
    ]);
    clock.advance(30_000);
    expect((await post(SECRET, "203.0.113.5")).status).toBe(200);
  });
});
