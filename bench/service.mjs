// Starts the built service (`node dist/node.js`) with a generated configuration in a
// temporary folder: loopback bind on a free port, echo brain, the given receiver.
import { existsSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startChild } from "./child-process.mjs";
import { CHANNEL_PATH } from "./message.mjs";

export const SERVICE_ENTRY = fileURLToPath(new URL("../dist/node.js", import.meta.url));

/**
 * Starts the service. `bufferCapacity`, `deliveryTimeoutMs`, `deliveryThread` (the config's
 * `delivery_thread`), `metrics` (`observability.metrics`), `durable` (a `state_dir`) and
 * `postgresUrl` (`postgres_url_env`: a replica on that database) are the only knobs the bench
 * turns; everything else stays at its default so the numbers describe a stock setup.
 * With `durable` the `state_dir` is a folder inside this start's temporary folder: empty at the
 * start, so no earlier run's state is resumed or migrated, and removed with it on stop.
 * `nodeOptions` lets the profiler add `--cpu-prof`; `entry` lets an experiment run another
 * build (a patched copy of the repository) side by side with this one. `admin` turns on the admin
 * API (in memory the message timeline is kept only then); `timeline` "off" sets its retention to
 * 0; undefined leaves the stock setting.
 */
export async function startService({
  secret,
  outboundUrl,
  bufferCapacity,
  deliveryTimeoutMs,
  deliveryThread = false,
  metrics = true,
  durable = false,
  postgresUrl,
  admin = false,
  timeline,
  nodeOptions = [],
  entry = SERVICE_ENTRY,
}) {
  if (!existsSync(entry)) throw new Error(`${entry} is missing: run npm run build first`);
  const folder = await mkdtemp(join(tmpdir(), "webhook-bench-"));
  const configPath = join(folder, "config.json");
  const webhook = {
    bind: "127.0.0.1:0",
    path: CHANNEL_PATH,
    outbound_url: outboundUrl,
    buffer_capacity: bufferCapacity,
  };
  if (deliveryTimeoutMs !== undefined) webhook.delivery = { timeout_ms: deliveryTimeoutMs };
  const config = {
    channels: [{ type: "webhook", name: "bench", token_env: "BENCH_SECRET", webhook }],
    routes: [{ channel: "bench", brain: "echo" }],
    // "info" is the lowest level that logs the "listening" line with the port; nothing per request.
    log_level: "info",
    // A bench that stops a service with messages still parked must not wait for them.
    shutdown_timeout_ms: 0,
  };
  if (deliveryThread) config.delivery_thread = true;
  if (!metrics) config.observability = { metrics: false };
  // The service creates the folder (and the SQLite file in it) itself, as it would in production.
  if (durable) config.state_dir = join(folder, "state");
  if (postgresUrl !== undefined) config.postgres_url_env = "BENCH_DATABASE_URL";
  if (admin) config.admin = { token_env: "BENCH_ADMIN_SECRET" };
  if (timeline === "off") config.timeline = { retention_hours: 0 };
  await writeFile(configPath, JSON.stringify(config, null, 2));
  try {
    const service = await startChild("service", [entry, "--config", configPath], {
      env: {
        BENCH_SECRET: secret,
        ...(admin ? { BENCH_ADMIN_SECRET: `${secret}-admin` } : {}),
        ...(postgresUrl === undefined ? {} : { BENCH_DATABASE_URL: postgresUrl }),
      },
      nodeOptions,
    });
    return {
      ...service,
      folder,
      async stop() {
        await service.stop();
        await rm(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  }
}
