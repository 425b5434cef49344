// The servers that the inbound table compares, each started fresh per round.
import { fileURLToPath } from "node:url";
import { startChild } from "./child-process.mjs";
import { startService } from "./service.mjs";

const BARE_ENTRY = fileURLToPath(new URL("./bare-server.mjs", import.meta.url));
const FASTIFY_ENTRY = fileURLToPath(new URL("./fastify-server.mjs", import.meta.url));

/** Enough room for every message of a round: both servers keep all that they accept. */
export const INBOUND_CAPACITY = 1_000_000;

/**
 * The baseline: bench/bare-server.mjs, holding what it accepts like the parked service. With
 * another key it is the same-server check: a second process of the baseline, whose ratio
 * shows how much two identical servers differ in one run on this machine.
 */
export const bareContender = (secret, { key = "bare", name = "bare node:http" } = {}) => ({
  key,
  name,
  start: () =>
    startChild("bare server", [BARE_ENTRY, "--capacity", String(INBOUND_CAPACITY), "--drain", "hold"], {
      env: { BENCH_SECRET: secret },
    }),
});

/** bench/fastify-server.mjs: the same checks as an ordinary Fastify 5 endpoint. */
export const fastifyContender = (secret) => ({
  key: "fastify",
  name: "Fastify 5 (same checks)",
  start: () =>
    startChild("fastify server", [FASTIFY_ENTRY, "--capacity", String(INBOUND_CAPACITY), "--drain", "hold"], {
      env: { BENCH_SECRET: secret },
    }),
});

/** Whether the Fastify devDependency is installed; the row is left out otherwise. */
export async function fastifyInstalled() {
  try {
    await import("fastify");
    return true;
  } catch {
    return false;
  }
}

/**
 * The built service, its consumer parked on `receiver` (mode "never"): with one conversation
 * only one message is ever in progress, so what is measured is the inbound path.
 */
export const serviceContender = (secret, receiver, { key = "service", name, entry } = {}) => ({
  key,
  name: name ?? "service (node dist/node.js)",
  async start() {
    await receiver.setMode("never");
    const service = await startService({
      entry,
      secret,
      outboundUrl: receiver.url,
      bufferCapacity: INBOUND_CAPACITY,
      deliveryTimeoutMs: 600_000,
    });
    return {
      ...service,
      async stop() {
        // Unpark first: the service's HTTP client waits for requests in flight on close.
        await receiver.setMode("answer");
        await service.stop();
      },
    };
  },
});
