import { describe, expect, it } from "vitest";
import { createLogSink } from "../../support/log-sink.js";
import { createTestApp } from "../../support/test-app.js";

describe("a refused request's debug line", () => {
  it("names the channel on the Hono route (Workers)", async () => {
    const { logger, lines } = createLogSink();
    const app = createTestApp({ logger });
    const response = await app.request("/webhook", { method: "POST", headers: { authorization: "Bearer wrong" } });
    expect(response.status).toBe(401);
    expect(lines).toContainEqual(expect.objectContaining({ msg: "request rejected", channel: "webhook", status: 401 }));
  });
});
