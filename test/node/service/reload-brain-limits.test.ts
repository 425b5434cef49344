/**
 * A reload that is refused changes nothing of the running brains: their limits included, though
 * the brains of the new configuration were built (and their limiters found) before the refusal.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Config } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { closeServers, startModelServer } from "../../core/brain/limits/counting-model-server.js";
import { configDocument } from "../../support/configs.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "reload-brain-limits-secret-0123456789";
let service: RunningService | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  await service?.stop(1_000);
  await receiver?.close();
  await closeServers();
  service = receiver = undefined;
});

function configOf(outbound: string, bot: string, max: number, webhook: Record<string, unknown> = {}): Config {
  const result = validateConfig(
    configDocument(
      { bind: "127.0.0.1:0", outbound_url: outbound, ...webhook },
      {
        brains: { bot: { type: "http", url: bot, max_concurrency: max } },
        routes: [{ channel: "webhook", brain: "bot" }],
      },
    ),
  );
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

describe("a refused reload and the brains' limits", () => {
  it("keeps max_concurrency as it was when the reload that raised it is refused", async () => {
    const server = await startModelServer(() => ({ status: 200, body: { text: "ok" } }), 100);
    let replies = 0;
    receiver = await startReceiver({ port: 0, onReply: () => (replies += 1) });
    const bot = `${server.origin}/bot`;
    service = await startService({
      config: configOf(receiver.url, bot, 1),
      secrets: new Map([["webhook", SECRET]]),
      logger: silentLogger,
      env: () => undefined,
    });
    // Refused after its brains were built: its signing secret is not set.
    const result = await service.reload({
      config: configOf(receiver.url, bot, 4, { signing_secret_env: "UNSET_SIGNING_SECRET" }),
      secrets: new Map([["webhook", SECRET]]),
      env: () => undefined,
    });
    expect(result).toMatchObject({ ok: false, reason: "unusable" });
    const url = `http://127.0.0.1:${service.listeners[0]?.port}/webhook`;
    for (let index = 0; index < 6; index += 1) {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: `sender-${index}`, text: "hello" }),
      });
      expect(response.status).toBe(200);
    }
    await waitFor(() => (replies === 6 ? true : undefined), 10_000, "six replies");
    expect(server.maxInFlight()).toBe(1);
  });
});
