import { describe, expect, it } from "vitest";
import { createApp } from "../../../src/core/app/create-app.js";
import type { AuthFailureLimiter } from "../../../src/core/auth-limit/auth-failure-limiter.js";
import { createMemoryAuthFailureLimiter } from "../../../src/core/auth-limit/memory-auth-failure-limiter.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { manualClock } from "../../support/brain-harness.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";

function appWith(
  authFailures: AuthFailureLimiter | undefined,
  peerAddress: ((request: Request) => string | null) | undefined,
  secrets: () => readonly string[] = () => ["s3cret"],
  webhook: Record<string, unknown> = {},
) {
  const result = validateConfig(configDocument(webhook));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const sink = createLogSink();
  let next = 0;
  const app = createApp({
    channels: result.config.channels,
    secretsFor: secrets,
    queueFor: () => ({ enqueue: () => undefined }),
    clock: manualClock(),
    newId: () => `id${++next}`,
    logger: sink.logger,
    ...(authFailures === undefined ? {} : { authFailures }),
    ...(peerAddress === undefined ? {} : { peerAddress }),
  });
  const post = (secret: string, headers: Record<string, string> = {}) =>
    app.request("/webhook", {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json", ...headers },
      body: JSON.stringify({ sender_id: "a", text: "hi" }),
    });
  return { post, lines: sink.lines };
}

const fromHeader = (request: Request) => request.headers.get("x-test-peer");

describe("the auth-failure limit in the accept flow", () => {
  it("refuses an address over the limit with 429 on the Hono route too", async () => {
    const { post } = appWith(createMemoryAuthFailureLimiter(manualClock()), fromHeader, undefined, {
      auth_failure_limit: { max: 2, window_s: 5 },
    });
    expect((await post("wrong", { "x-test-peer": "192.0.2.1" })).status).toBe(401);
    expect((await post("wrong", { "x-test-peer": "192.0.2.1" })).status).toBe(401);
    const refused = await post("s3cret", { "x-test-peer": "192.0.2.1" });
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect((await post("s3cret", { "x-test-peer": "192.0.2.2" })).status).toBe(200);
  });

  it("does not limit a request whose address is unknown", async () => {
    const { post } = appWith(createMemoryAuthFailureLimiter(manualClock()), undefined);
    for (let index = 0; index < 25; index += 1) expect((await post("wrong")).status).toBe(401);
    expect((await post("s3cret")).status).toBe(200);
  });

  it("asks for the secrets on every request, so that new ones apply at once", async () => {
    let secrets: readonly string[] = ["old-secret"];
    const { post } = appWith(undefined, undefined, () => secrets);
    expect((await post("old-secret")).status).toBe(200);
    secrets = ["new-secret", "old-secret"];
    expect((await post("new-secret")).status).toBe(200);
    expect((await post("old-secret")).status).toBe(200);
    secrets = ["new-secret"];
    expect((await post("old-secret")).status).toBe(401);
  });

  it("checks the secret without the limit when the limiter fails, and says so at error level", async () => {
    const failing: AuthFailureLimiter = {
      check: () => Promise.reject(new Error("object unreachable")),
      recordFailure: () => Promise.reject(new Error("object unreachable")),
    };
    const { post, lines } = appWith(failing, fromHeader);
    expect((await post("s3cret", { "x-test-peer": "192.0.2.1" })).status).toBe(200);
    expect((await post("wrong", { "x-test-peer": "192.0.2.1" })).status).toBe(401);
    expect(lines.filter((line) => line.level === "error").map((line) => line.msg)).toEqual([
      "cannot check the auth-failure limit; the request is checked without it",
      "cannot check the auth-failure limit; the request is checked without it",
      "cannot count a failed authentication",
    ]);
  });
});
