import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import type { Metrics } from "../../../src/core/metrics/metrics.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";
import { configDocument } from "../../support/configs.js";
import { createTestApp } from "../../support/test-app.js";

function appWith(options: { metricsEndpoint?: () => Promise<Response>; metrics?: Metrics }) {
  return createTestApp(options);
}

describe("the metrics path of the core app", () => {
  it("serves what the runtime's endpoint answers, and 405 to other methods", async () => {
    const app = appWith({
      metricsEndpoint: async () => new Response("up 1\n", { headers: { "content-type": "text/plain" } }),
    });
    const response = await app.request("/metrics");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("up 1\n");
    const post = await app.request("/metrics", { method: "POST" });
    expect(post.status).toBe(405);
    expect(post.headers.get("allow")).toBe("GET, HEAD");
  });

  it("is a 404 without an endpoint", async () => {
    expect((await appWith({}).request("/metrics")).status).toBe(404);
  });

  it("cannot be a channel's path", () => {
    expect(validateConfig(configDocument({ path: "/metrics" })).ok).toBe(false);
  });

  it("counts every answer on a channel's path through the injected metrics, refusals included", async () => {
    const counted: [string, number][] = [];
    const metrics: Metrics = { ...noopMetrics, request: (channel, code) => counted.push([channel, code]) };
    const app = appWith({ metrics });
    const path = validateConfig(configDocument());
    if (!path.ok) throw new Error("bad config");
    const channel = path.config.channels[0];
    if (channel === undefined) throw new Error("no channel");
    const url = channel.webhook.path;
    const json = { "content-type": "application/json" };
    await app.request(url, {
      method: "POST",
      headers: { authorization: "Bearer s", ...json },
      body: '{"sender_id":"a","text":"x"}',
    });
    await app.request(url, { method: "POST", headers: { authorization: "Bearer wrong", ...json }, body: "{}" });
    await app.request(url, { method: "GET" });
    expect(counted.map(([, code]) => code)).toEqual([200, 401, 405]);
  });
});
