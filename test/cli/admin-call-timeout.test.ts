import type { AddressInfo } from "node:net";
import { createServer, type Server, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run-cli.js";

// A service that takes the connection and never answers: frozen (SIGSTOP, a stuck event loop),
// or a proxy in front of one that is down. The `--url` commands must give up with a clear
// error and exit 1, as for a service that cannot be reached, not wait without end.
const ADMIN = "admin-secret-for-the-cli-0123456789";
let server: Server | undefined;
const sockets = new Set<Socket>();

afterEach(async () => {
  for (const socket of sockets) socket.destroy();
  sockets.clear();
  await new Promise<void>((resolve) => (server === undefined ? resolve() : server.close(() => resolve())));
  server = undefined;
});

/** Starts a TCP server that reads the request and never answers; `headersFirst` sends a status line and headers, then stalls. */
async function silentService(headersFirst: boolean): Promise<string> {
  server = createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => socket.destroy());
    socket.once("data", () => {
      if (headersFirst) {
        socket.write("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{");
      }
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function cli(args: string[]) {
  let out = "";
  let err = "";
  const started = Date.now();
  const code = await runCli(args, {
    env: { WEBHOOK_ADMIN_SECRET: ADMIN },
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
    adminTimeoutMs: 300,
  });
  return { code, out, err, took: Date.now() - started };
}

describe("--url against a service that never answers", () => {
  for (const headersFirst of [false, true]) {
    const what = headersFirst ? "its body never comes" : "no answer at all";
    for (const args of [
      ["dead-letters", "list"],
      ["dead-letters", "show", "--id", "0b6a4c3e-1f7d-4a51-9d43-5b1f0e2c7a10"],
      ["dead-letters", "replay", "--all"],
      ["messages", "list"],
      ["messages", "show", "0b6a4c3e-1f7d-4a51-9d43-5b1f0e2c7a10"],
    ]) {
      it(`${args.join(" ")} gives up and exits 1 (${what})`, { timeout: 10_000 }, async () => {
        const url = await silentService(headersFirst);
        const run = await cli([...args, "--url", url]);
        expect(run.code).toBe(1);
        expect(run.out).toBe("");
        expect(run.err).toContain(url);
        expect(run.err).toMatch(/no answer within 0\.3 s/);
        expect(run.took).toBeLessThan(5_000);
      });
    }
  }
});
