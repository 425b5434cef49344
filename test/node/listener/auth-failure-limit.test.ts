import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { type ManualClock, manualClock } from "../../support/brain-harness.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";
import { SECRET } from "../../support/node-service.js";

const WRONG = "wrong-guess-0123456789";

interface Limited {
  readonly service: RunningService;
  readonly receiver: Receiver;
  readonly url: string;
  readonly clock: ManualClock;
  readonly logs: Record<string, unknown>[];
}

let running: Limited | undefined;

afterEach(async () => {
  await running?.service.stop(1_000);
  await running?.receiver.close();
  running = undefined;
});

/** The real service on loopback, its clock in the test's hands so that no window is waited out. */
async function start(webhook: Record<string, unknown> = {}): Promise<Limited> {
  const receiver = await startReceiver({ port: 0 });
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: receiver.url, ...webhook }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const clock = manualClock();
  const { logger, lines } = createLogSink();
  const service = await startService({
    config: result.config,
    secrets: new Map([["webhook", SECRET]]),
    logger,
    clock,
  });
  const port = service.listeners[0]?.port;
  if (port === undefined) throw new Error("no listener");
  running = { service, receiver, url: `http://127.0.0.1:${port}/webhook`, clock, logs: lines };
  return running;
}

/** A POST with `secret`, from `client` as the trusted proxy on loopback reports it. */
function post(url: string, secret: string, client?: string): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: {
      authorization: `Bearer ${secret}`,
      "content-type": "application/json",
      ...(client === undefined ? {} : { "x-forwarded-for": client }),
    },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });
}

async function failTimes(url: string, times: number, client?: string): Promise<void> {
  for (let index = 0; index < times; index += 1) {
    const response = await post(url, WRONG, client);
    expect(response.status).toBe(401);
    await response.body?.cancel();
  }
}

describe("the auth-failure limit on the Node listener", () => {
  it("answers 429 with Retry-After after 20 failures, to the right secret too, and to no other address", async () => {
    const { url, clock, logs } = await start({ trusted_proxies: ["127.0.0.1/32"] });
    await failTimes(url, 20, "198.51.100.7");

    const refused = await post(url, WRONG, "198.51.100.7");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("content-type")).toBe("application/problem+json");
    expect(refused.headers.get("retry-after")).toBe("60");
    expect(refused.headers.get("www-authenticate")).toBeNull();
    const problem = (await refused.json()) as Record<string, unknown>;
    expect(problem).toMatchObject({ status: 429, code: "too_many_requests", title: "Too Many Requests" });
    expect(JSON.stringify(problem)).not.toContain(WRONG);

    // The secret is not even compared while the address is refused.
    clock.advance(30_000);
    const right = await post(url, SECRET, "198.51.100.7");
    expect(right.status).toBe(429);
    expect(right.headers.get("retry-after")).toBe("30");
    expect(JSON.stringify(await right.json())).not.toContain(SECRET);

    // Other addresses are not affected.
    expect((await post(url, SECRET, "198.51.100.8")).status).toBe(200);
    const wrong = await post(url, WRONG, "198.51.100.8");
    expect(wrong.status).toBe(401);
    expect(await wrong.text()).not.toContain(WRONG);

    // The first refusal is logged at warn, once, with the address and the channel; no secret.
    const warnings = logs.filter((line) => line.level === "warn");
    expect(warnings).toEqual([
      expect.objectContaining({ channel: "webhook", address: "198.51.100.7", retry_after_s: 60 }),
    ]);
    expect(JSON.stringify(logs)).not.toContain(WRONG);
    expect(JSON.stringify(logs)).not.toContain(SECRET);
  });

  it("lets the address in again once its failures have left the window", async () => {
    const { url, clock } = await start({ trusted_proxies: ["127.0.0.1/32"] });
    await failTimes(url, 20, "198.51.100.7");
    expect((await post(url, SECRET, "198.51.100.7")).status).toBe(429);
    clock.advance(59_999);
    expect((await post(url, SECRET, "198.51.100.7")).status).toBe(429);
    clock.advance(1);
    const freed = await post(url, SECRET, "198.51.100.7");
    expect(freed.status).toBe(200);
    expect(await freed.json()).toMatchObject({ status: "accepted" });
  });

  it("follows webhook.auth_failure_limit", async () => {
    const { url, clock } = await start({
      trusted_proxies: ["127.0.0.1/32"],
      auth_failure_limit: { max: 3, window_s: 10 },
    });
    await failTimes(url, 3, "198.51.100.7");
    const refused = await post(url, SECRET, "198.51.100.7");
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("10");
    clock.advance(10_000);
    expect((await post(url, SECRET, "198.51.100.7")).status).toBe(200);
  });

  it("believes no X-Forwarded-For without trusted_proxies: the socket's peer is refused whatever it claims", async () => {
    const { url, logs } = await start();
    for (let index = 0; index < 20; index += 1) {
      const response = await post(url, WRONG, `203.0.113.${index}`);
      expect(response.status).toBe(401);
      await response.body?.cancel();
    }
    expect((await post(url, SECRET, "203.0.113.200")).status).toBe(429);
    expect(logs).toContainEqual(expect.objectContaining({ level: "warn", address: "127.0.0.1" }));
  });

  it("does not count a wrong media type or a bad body as a failed authentication", async () => {
    const { url } = await start({ trusted_proxies: ["127.0.0.1/32"] });
    for (let index = 0; index < 25; index += 1) {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "text/plain", "x-forwarded-for": "198.51.100.7" },
        body: "{}",
      });
      expect(response.status).toBe(415);
      await response.body?.cancel();
    }
    expect((await post(url, SECRET, "198.51.100.7")).status).toBe(200);
  });
});
