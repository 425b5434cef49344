import { once } from "node:events";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { vi } from "vitest";

/** A loopback server that answers nothing until the test does, through the response it holds. */
export interface HoldingServer {
  readonly url: string;
  /** The response of the last request that arrived whole, once one has. */
  held(): ServerResponse | undefined;
  close(): void;
}

/** Starts a {@link HoldingServer} whose requests go to `path`. */
export async function startHoldingServer(path: string): Promise<HoldingServer> {
  let held: ServerResponse | undefined;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      held = response;
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`,
    held: () => held,
    close: () => {
      server.closeAllConnections();
      server.close();
    },
  };
}

/**
 * Moves fake timers on by `ms` in half-second slices, the sockets read between slices, as time
 * would pass: timers of a client's own (undici's) fire among the reads, as they would.
 */
export async function passFakeTime(ms: number): Promise<void> {
  for (let passed = 0; passed < ms; passed += 500) {
    vi.advanceTimersByTime(500);
    await new Promise((resolve) => setImmediate(resolve));
  }
}
