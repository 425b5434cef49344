/**
 * A stop whose wait (`shutdown_timeout_ms`) ends while a brain call is in flight ends soon after,
 * as the delivery thread's does: it does not wait for the brain to answer (closing the brains'
 * connections gracefully waited for the call, up to the brain's `timeout_ms`).
 */
import { createServer, type Server } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

describe("a stop with a brain call in flight", () => {
  it("ends within shutdown_timeout_ms and a short grace, not when the brain answers", async () => {
    let calls = 0;
    // A brain that answers after 20 s (its timeout_ms is 30 s).
    const bot = createServer((_request, response) => {
      calls += 1;
      setTimeout(() => {
        response.writeHead(200, { "content-type": "application/json" });
        response.end(JSON.stringify({ text: "late" }));
      }, 20_000).unref();
    });
    servers.push(bot);
    await new Promise<void>((resolve) => bot.listen(0, "127.0.0.1", resolve));
    const port = (bot.address() as { port: number }).port;
    const harness = await startHarness(
      {},
      {},
      {
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `http://127.0.0.1:${port}/bot`, timeout_ms: 30_000 } },
      },
    );
    const response = await harness.post({ sender_id: "u1", text: "hello" });
    expect(response.status).toBe(200);
    await waitFor(() => (calls > 0 ? true : undefined), 5_000, "the brain call");
    const started = Date.now();
    const result = await harness.service.stop(500);
    const took = Date.now() - started;
    expect(result.left.length).toBe(1);
    // 500 ms of wait, and a few seconds of grace at the most (the delivery thread gets >= 1 s).
    expect(took).toBeLessThan(5_000);
  }, 40_000);
});
