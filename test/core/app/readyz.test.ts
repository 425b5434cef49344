import { describe, expect, it } from "vitest";
import type { Readiness } from "../../../src/core/app/readiness.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";
import { createTestApp } from "../../support/test-app.js";

function appWith(options: { shuttingDown?: boolean; readiness?: Readiness }) {
  return createTestApp({
    isShuttingDown: () => options.shuttingDown ?? false,
    ...(options.readiness === undefined ? {} : { readiness: options.readiness }),
  });
}

describe("GET /readyz in the core app", () => {
  it("answers ready without a readiness of the runtime, and draining once shutdown began", async () => {
    const ready = await appWith({}).request("/readyz");
    expect(ready.status).toBe(200);
    expect(ready.headers.get("cache-control")).toBe("no-store");
    expect(await ready.json()).toEqual({ status: "ready" });
    const draining = await appWith({ shuttingDown: true }).request("/readyz");
    expect(draining.status).toBe(503);
    expect(await draining.json()).toEqual({ status: "draining" });
  });

  it("answers 503 with the runtime's report when it is not ready, also to HEAD", async () => {
    const app = appWith({ readiness: { report: () => Promise.resolve({ status: "full", queue: { depth: 3 } }) } });
    const response = await app.request("/readyz");
    expect(response.status).toBe(503);
    expect(await response.json()).toEqual({ status: "full", queue: { depth: 3 } });
    expect((await app.request("/readyz", { method: "HEAD" })).status).toBe(503);
  });

  it("answers 405 with Allow: GET, HEAD to another method", async () => {
    const response = await appWith({}).request("/readyz", { method: "DELETE" });
    expect(response.status).toBe(405);
    expect(response.headers.get("allow")).toBe("GET, HEAD");
  });
});

describe("the readiness path", () => {
  it("cannot be a channel's path", () => {
    const result = validateConfig(configDocument({ path: "/readyz" }));
    expect(result.ok).toBe(false);
  });
});
