/**
 * Replies held for a receiver that is down, when a reload moves `outbound_url` to another
 * origin: the circuit starts afresh under the new settings at once, so they go to the new
 * receiver now, not at the old receiver's next probe (minutes away at the default schedule).
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "reload-held-secret-0123456789";
let service: RunningService | undefined;
const receivers: Receiver[] = [];

afterEach(async () => {
  await service?.stop(1_000);
  service = undefined;
  await Promise.all(receivers.splice(0).map((receiver) => receiver.close()));
});

function configOf(outboundUrl: string): Config {
  // The first probe a minute away: the test must not wait for it.
  const delivery = { circuit_failures: 1, initial_delay_ms: 60_000 };
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: outboundUrl, delivery }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("a reload that moves outbound_url while the receiver is down", () => {
  it("sends the held replies to the new receiver at once", async () => {
    const down = await startReceiver({ port: 0, status: () => 503 });
    const up: ReceivedReply[] = [];
    const next = await startReceiver({ port: 0, onReply: (reply) => up.push(reply) });
    receivers.push(down, next);
    const { logger, lines } = createLogSink();
    service = await startService({ config: configOf(down.url), secrets: new Map([["webhook", SECRET]]), logger });
    const url = `http://127.0.0.1:${service.listeners[0]?.port}/webhook`;
    for (const sender of ["a", "b", "c"]) {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: sender, text: "hi" }),
      });
      expect(response.status).toBe(200);
    }
    await waitFor(
      () => lines.find((line) => String(line.msg).startsWith("receiver down")),
      10_000,
      "the receiver down",
    );

    const result = await service.reload({
      config: configOf(next.url),
      secrets: new Map([["webhook", SECRET]]),
      env: () => undefined,
    });
    expect(result).toMatchObject({ ok: true });
    await waitFor(() => (up.length === 3 ? true : undefined), 5_000, "the three held replies at the new receiver");
    // Started afresh by the reload: not announced as the old receiver's recovery.
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: expect.stringContaining("receiver circuit started afresh by a reload") }),
    );
    expect(lines.some((line) => String(line.msg).startsWith("receiver up"))).toBe(false);
  }, 20_000);
});
