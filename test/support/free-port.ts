import { readFileSync } from "node:fs";
import { createServer } from "node:net";

// A port the kernel hands out for `listen(0)` can be handed out again the moment it is closed:
// to the next test server on port 0, in this file or another running beside it. A port from
// below the kernel's ephemeral range is never handed out that way, so one that was free stays
// free for the test that asked for it (a receiver that starts later, or a port that refuses).

/** Where Linux starts its ephemeral ports when it does not say (and macOS's is above it). */
const DEFAULT_EPHEMERAL_START = 32_768;
/** Well above the ports system services and databases take by default. */
const LOWEST = 20_000;
const ATTEMPTS = 50;

function ephemeralStart(): number {
  try {
    const first = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
    return Number.isInteger(first) && first > LOWEST + 1_000 ? first : DEFAULT_EPHEMERAL_START;
  } catch {
    return DEFAULT_EPHEMERAL_START;
  }
}

function freeNow(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

/**
 * A loopback port that nothing listens on, from outside the range the kernel hands out for port 0,
 * so no test server started after it takes it: for a receiver that starts later, or one that refuses.
 */
export async function freePort(): Promise<number> {
  const end = ephemeralStart();
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const port = LOWEST + Math.floor(Math.random() * (end - LOWEST));
    if (await freeNow(port)) return port;
  }
  throw new Error(`no free loopback port between ${LOWEST} and ${end} after ${ATTEMPTS} tries`);
}
