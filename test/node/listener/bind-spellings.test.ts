/**
 * Channels whose binds spell one address two ways (`127.1` and `127.0.0.1`, `[::1]` and
 * `[0:0:0:0:0:0:0:1]`) share one listener, as channels with the same bind do: two servers on
 * one socket could not both listen.
 */
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { freePort } from "../../support/free-port.js";
import { createLogSink } from "../../support/log-sink.js";

const SECRET = "bind-spelling-secret-0123456789";
let service: RunningService | undefined;

afterEach(async () => {
  await service?.stop(0);
  service = undefined;
});

async function startOn(first: string, second: string): Promise<RunningService> {
  const channel = (name: string, bind: string) => ({
    type: "webhook",
    name,
    token_env: "WEBHOOK_SECRET",
    webhook: { bind, path: `/${name}`, outbound_url: "http://127.0.0.1:9/replies" },
  });
  const result = validateConfig({
    channels: [channel("a", first), channel("b", second)],
    routes: [
      { channel: "a", brain: "echo" },
      { channel: "b", brain: "echo" },
    ],
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const secrets = new Map([
    ["a", SECRET],
    ["b", SECRET],
  ]);
  return startService({ config: result.config, secrets, logger: createLogSink("error").logger });
}

const unauthenticated = (url: string) => fetch(url, { method: "POST", body: "{}" });

describe("binds that spell one address two ways", () => {
  it.each([
    ["127.1", "127.0.0.1", "127.0.0.1"],
    ["[::1]", "[0:0:0:0:0:0:0:1]", "[::1]"],
  ])("%s and %s share one listener, which serves both channels", async (first, second, host) => {
    const port = await freePort();
    service = await startOn(`${first}:${port}`, `${second}:${port}`);
    expect(service.listeners).toHaveLength(1);
    expect(service.listeners[0]?.channels).toEqual(["a", "b"]);
    for (const path of ["/a", "/b"]) expect((await unauthenticated(`http://${host}:${port}${path}`)).status).toBe(401);
  });
});
