import { createServer, type Server } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const SECRET = "a-long-enough-channel-secret-0123456789";

let server: Server | undefined;

afterEach(async () => {
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** A TCP server on a free loopback port that counts the connections it took; resolves to its port. */
async function listening(connections: { count: number }): Promise<number> {
  const started = createServer((socket) => {
    connections.count += 1;
    socket.destroy();
  });
  server = started;
  await new Promise<void>((resolve) => started.listen(0, "127.0.0.1", () => resolve()));
  const address = started.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

async function configFor(up: number, down: number): Promise<string> {
  const channel = (name: string, path: string) => ({
    type: "webhook",
    name,
    token_env: "WEBHOOK_SECRET",
    webhook: { path, outbound_url: `http://127.0.0.1:${up}/replies/${name}` },
  });
  return writeTempConfig({
    channels: [channel("first", "/first"), channel("second", "/second")],
    brains: { bot: { type: "http", url: `http://127.0.0.1:${down}/bot` } },
    routes: [
      { channel: "first", brain: "bot" },
      { channel: "second", brain: "bot" },
    ],
    operator_events: { url: "https://events.invalid/hook", signing_secret_env: "EVENTS_SECRET" },
  });
}

const ENV = { WEBHOOK_SECRET: SECRET, EVENTS_SECRET: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" };

describe("config check --preflight and the URLs the service calls", () => {
  it("notes each address that takes a connection and warns, without failing, of each that does not", async () => {
    const connections = { count: 0 };
    const up = await listening(connections);
    const down = await freePort();
    const { code, out, err } = await runCliCaptured(["config", "check", "--preflight", await configFor(up, down)], ENV);
    expect(code).toBe(0);
    for (const index of [0, 1]) {
      expect(out).toContain(
        `  note    channels[${index}].webhook.outbound_url: 127.0.0.1:${up} takes connections from this machine\n`,
      );
    }
    // Two keys name the receiver's address: it was tried once.
    await expect.poll(() => connections.count).toBe(1);
    expect(err).toContain(
      `  warning brains.bot.url: cannot connect to 127.0.0.1:${down} from this machine (ECONNREFUSED). Fix: start the server there, or correct the URL`,
    );
    expect(err).toMatch(
      /^ {2}warning operator_events\.url: cannot connect to events\.invalid:443 from this machine \((ENOTFOUND|EAI_AGAIN)\)/m,
    );
    expect(out).toContain("OK (environment confirmed)");
  });

  it("tries no address without --preflight", async () => {
    const connections = { count: 0 };
    const up = await listening(connections);
    const { code, out } = await runCliCaptured(["config", "check", await configFor(up, await freePort())], ENV);
    expect(code).toBe(0);
    expect(out).not.toContain("takes connections");
    expect(connections.count).toBe(0);
  });
});
