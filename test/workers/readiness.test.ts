import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/workers/index.js";
import { captureLogs } from "./support/fake-receiver.js";
import { channelConfig, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(() => {
  vi.restoreAllMocks();
});

describe("GET /readyz inside workerd", () => {
  it("answers ready, with the count of dead letters stored", async () => {
    captureLogs();
    const env = testEnv(channelConfig(), { WEBHOOK_SECRET: SECRET });
    const response = await worker.fetch(new Request("https://channel.example/readyz"), env);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: "ready", dead_letters: expect.any(Number) });
    const head = await worker.fetch(new Request("https://channel.example/readyz", { method: "HEAD" }), env);
    expect(head.status).toBe(200);
  });
});
