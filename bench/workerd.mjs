// The Worker under workerd, as a contender of the inbound table: bundled once with
// `wrangler deploy --dry-run`, then run per round by Miniflare's programmatic API on a
// loopback port. Requests go straight to a workerd socket bound to the Worker itself
// (Miniflare's `unsafeDirectSockets`): neither `wrangler dev`'s proxy nor Miniflare's entry
// worker sits in between. Measured on the 2-core box with a minimal Worker, the entry worker
// alone cut 16,200 req/s to 5,500, which would say more about Miniflare than about us.
// Skips, with the reason, while the Worker is still a placeholder.
import { execFile } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { CHANNEL_PATH } from "./message.mjs";
import { cpuSeconds, peakRss } from "./proc-stats.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WORKER_ENTRY = join(ROOT, "src/workers/index.ts");
const WRANGLER_CONFIGS = ["wrangler.toml", "wrangler.jsonc", "wrangler.json"];
const BUNDLE_TIMEOUT_MS = 180_000;
const KEPT_LINES = 40;

/** Why the Worker cannot be measured yet, or null when it can. */
function whyNot() {
  if (!WRANGLER_CONFIGS.some((file) => existsSync(join(ROOT, file))))
    return "no wrangler configuration in the repository";
  if (!existsSync(WORKER_ENTRY)) return "src/workers/index.ts does not exist";
  if (!/export\s+default\b/.test(readFileSync(WORKER_ENTRY, "utf8"))) {
    return "src/workers/index.ts is still a placeholder (no default export)";
  }
  return null;
}

/** The workerd process Miniflare started: a child of this process named workerd. */
function findWorkerdPid() {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (parent === process.pid && name.includes("workerd")) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return null;
}

/** A bounded sink for workerd's stdout and stderr: kept for error messages, never printed. */
function createSink() {
  const lines = [];
  const take = (stream) => {
    stream.setEncoding("utf8");
    stream.on("data", (text) => {
      for (const line of text.split("\n")) if (line !== "") lines.push(line);
      lines.splice(0, Math.max(0, lines.length - KEPT_LINES));
    });
  };
  return { handle: (stdout, stderr) => [stdout, stderr].forEach(take), lines };
}

/**
 * Bundles the Worker of the checkout at `root` with `wrangler deploy --dry-run` into a new
 * temporary folder, and reads the Miniflare options of its own wrangler configuration (its
 * queues, Durable Objects and consumer settings). Returns `{ bundle, outdir, workerOptions,
 * cleanup() }`; throws when it cannot.
 */
export async function bundleWorker(root) {
  const outdir = await mkdtemp(join(tmpdir(), "webhook-worker-"));
  const cleanup = () => rm(outdir, { recursive: true, force: true });
  try {
    await promisify(execFile)("npx", ["wrangler", "deploy", "--dry-run", "--outdir", outdir], {
      cwd: root,
      timeout: BUNDLE_TIMEOUT_MS,
      // No telemetry and no banner (the banner's update check would leave the machine).
      env: { ...process.env, WRANGLER_SEND_METRICS: "false", WRANGLER_HIDE_BANNER: "true" },
      maxBuffer: 16 * 1024 * 1024,
    });
    const bundle = join(outdir, "index.js");
    if (!existsSync(bundle)) throw new Error(`wrangler wrote no index.js into ${outdir}`);
    const { unstable_getMiniflareWorkerOptions } = await import("wrangler");
    const configFile = WRANGLER_CONFIGS.map((file) => join(root, file)).find((file) => existsSync(file));
    const { workerOptions } = unstable_getMiniflareWorkerOptions(configFile);
    return { bundle, outdir, workerOptions, cleanup };
  } catch (error) {
    await cleanup();
    throw error;
  }
}

/** The first lines of a failed bundling, for a one-line skip reason. */
export const failureReason = (error) =>
  (error.stderr || error.message || String(error)).trim().split("\n").slice(-5).join(" / ");

/**
 * Starts a bundled Worker (from {@link bundleWorker}) under workerd with Miniflare's API: the
 * bindings of its wrangler configuration, `config` as CONFIG_JSON and the secret as
 * BENCH_SECRET, and a direct socket bound to the Worker itself. Returns `{ url, pid, sink,
 * dispose() }`, where `url` is the socket's origin.
 */
export async function startWorkerd(built, { config, secret }) {
  const { Miniflare } = await import("miniflare");
  const { bundle, outdir, workerOptions } = built;
  const sink = createSink();
  const miniflare = new Miniflare({
    host: "127.0.0.1",
    port: 0,
    handleRuntimeStdio: sink.handle,
    workers: [
      {
        ...workerOptions,
        name: "webhook-channel",
        modules: true,
        scriptPath: bundle,
        // Module names are paths relative to this; the bundle lives outside the repo.
        modulesRoot: outdir,
        unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }],
        bindings: { ...workerOptions.bindings, CONFIG_JSON: JSON.stringify(config), BENCH_SECRET: secret },
      },
    ],
  });
  let url;
  try {
    await miniflare.ready;
    url = await miniflare.unsafeGetDirectURL("webhook-channel");
  } catch (error) {
    // dispose() rethrows the start-up failure; the lines below say more than it does.
    await miniflare.dispose().catch(() => undefined);
    throw new Error(`Miniflare did not start: ${error.message}\n${sink.lines.join("\n")}`);
  }
  return { url, pid: findWorkerdPid(), sink, dispose: () => miniflare.dispose() };
}

/** The bench's one channel, `bench` on CHANNEL_PATH with the echo brain, replying to `outboundUrl`. */
export const benchConfig = (outboundUrl) => ({
  channels: [
    {
      type: "webhook",
      name: "bench",
      token_env: "BENCH_SECRET",
      webhook: { path: CHANNEL_PATH, outbound_url: outboundUrl },
    },
  ],
  routes: [{ channel: "bench", brain: "echo" }],
});

/**
 * Bundles the Worker and returns `{ contender(receiver), cleanup() }`, or `{ skipped }` with
 * the reason when it cannot run.
 */
export async function prepareWorkerd({ secret, log }) {
  const reason = whyNot();
  if (reason !== null) {
    log(`workerd: skipped (${reason})`);
    return { skipped: reason };
  }
  let built;
  try {
    log("workerd: bundling the Worker (wrangler deploy --dry-run)");
    built = await bundleWorker(ROOT);
  } catch (error) {
    const message = failureReason(error);
    log(`workerd: skipped (could not bundle or load the Worker: ${message})`);
    return { skipped: `could not bundle or load the Worker: ${message}` };
  }
  const contender = (receiver) => ({
    key: "workerd",
    name: "Worker under workerd (Miniflare, direct socket)",
    async start() {
      await receiver.setMode("never");
      const { url, pid, sink, dispose } = await startWorkerd(built, { config: benchConfig(receiver.url), secret });
      return {
        url: new URL(CHANNEL_PATH, url).href,
        pid,
        cpuSeconds: () => (pid === null ? null : cpuSeconds(pid)),
        peakRss: () => (pid === null ? null : peakRss(pid)),
        recentOutput: () => sink.lines.join("\n"),
        async stop() {
          await receiver.setMode("answer");
          await dispose();
        },
      };
    },
  });
  return { contender, cleanup: () => built.cleanup(), built };
}
