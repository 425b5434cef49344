// `node bench/profile.mjs [inbound|end-to-end] [--bare] [--durable] [--postgres] [--admin] [--no-timeline]
// [--seconds N] [--rate N]`: runs the built service (with --durable over a fresh `state_dir`; with
// --postgres as one replica on a private cluster, fsync on, as the bench runs it;
// with --admin the admin API on, which in memory keeps the message timeline unless
// --no-timeline turns it off; or, with --bare,
// bench/bare-server.mjs, inbound only) under `--cpu-prof`
// with the bench's load, then prints where each thread's CPU went: the functions with the most self
// time and the inclusive share of each source file (mapped back to src/ through the
// source maps in dist/) and package. Not part of `npm run bench`.
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { SourceMap } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { createDatabase, startPostgresCluster } from "../scripts/postgres-cluster.mjs";
import { startChild } from "./child-process.mjs";
import { runLoad } from "./load.mjs";
import { messageBody, messageHeaders, newSecret } from "./message.mjs";
import { createSenderPool, sendPaced } from "./paced-sender.mjs";
import { BENCH_CLUSTER } from "./postgres-cost.mjs";
import { startReceiver } from "./receiver-client.mjs";
import { SERVICE_ENTRY, startService } from "./service.mjs";

const TOP = 30;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    seconds: { type: "string", default: "10" },
    rate: { type: "string", default: "5000" },
    bare: { type: "boolean", default: false },
    durable: { type: "boolean", default: false },
    postgres: { type: "boolean", default: false },
    admin: { type: "boolean", default: false },
    "no-timeline": { type: "boolean", default: false },
  },
});
const scenario = positionals[0] ?? "inbound";
if (scenario !== "inbound" && scenario !== "end-to-end") throw new Error(`unknown scenario ${scenario}`);
const seconds = Math.min(120, Number(values.seconds));
const BARE_ENTRY = fileURLToPath(new URL("./bare-server.mjs", import.meta.url));

/**
 * Where a profile frame comes from: a src/ file, a package, Node internals or V8. `sourceMaps`
 * holds the map of each bundle in dist/ (the main thread's and the threads' entries) by name.
 */
function origin(frame, sourceMaps) {
  const { url, lineNumber, columnNumber, functionName } = frame;
  if (url === "") return functionName || "(anonymous)";
  if (url.endsWith("/bench/bare-server.mjs")) return { file: "bench/bare-server.mjs", line: lineNumber + 1 };
  const bundle = /\/dist\/([^/]+\.js)$/.exec(url)?.[1];
  const sourceMap = bundle === undefined ? undefined : sourceMaps.get(bundle);
  if (sourceMap !== undefined) {
    const entry = sourceMap.findEntry(lineNumber, columnNumber);
    if (entry?.originalSource) {
      const source = entry.originalSource.replace(/^.*?\/src\//, "src/");
      return { file: source, line: entry.originalLine + 1 };
    }
  }
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg !== null) return { file: pkg[1], line: lineNumber + 1 };
  if (url.startsWith("node:")) return { file: url.replace(/^node:internal\/(deps\/)?/, "node:"), line: lineNumber + 1 };
  return { file: url, line: lineNumber + 1 };
}

function analyse(profile, sourceMaps, requests) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parent = new Map();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const where = new Map();
  for (const node of profile.nodes) where.set(node.id, origin(node.callFrame, sourceMaps));

  const self = new Map();
  const inclusive = new Map();
  let total = 0;
  for (let index = 0; index < profile.samples.length; index += 1) {
    const id = profile.samples[index];
    const delta = profile.timeDeltas[index] ?? 0;
    const node = byId.get(id);
    const place = where.get(id);
    if (node.callFrame.functionName === "(idle)") continue;
    total += delta;
    const label =
      typeof place === "string"
        ? place
        : `${node.callFrame.functionName || "(anonymous)"}  ${place.file}:${place.line}`;
    self.set(label, (self.get(label) ?? 0) + delta);
    // Each file counted once per sample, however often it appears in the stack.
    const seen = new Set();
    for (let cursor = id; cursor !== undefined; cursor = parent.get(cursor)) {
      const at = where.get(cursor);
      seen.add(typeof at === "string" ? at : at.file);
    }
    for (const file of seen) inclusive.set(file, (inclusive.get(file) ?? 0) + delta);
  }
  // Profile times are in µs; per request they compare directly with the bare server's.
  const rank = (map) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, TOP)
      .map(
        ([label, time]) =>
          `${((100 * time) / total).toFixed(1).padStart(5)}%  ${(time / requests).toFixed(2).padStart(6)} µs/req  ${label}`,
      );
  return { totalMs: total / 1000, self: rank(self), inclusive: rank(inclusive) };
}

async function main() {
  const secret = newSecret();
  const folder = await mkdtemp(join(tmpdir(), "webhook-profile-"));
  const receiver = await startReceiver(scenario === "inbound" ? "never" : "answer");
  const cluster = values.postgres ? await startPostgresCluster(BENCH_CLUSTER) : undefined;
  try {
    const nodeOptions = ["--cpu-prof", `--cpu-prof-dir=${folder}`];
    const service = values.bare
      ? await startChild("bare server", [...nodeOptions, BARE_ENTRY], { env: { BENCH_SECRET: secret } })
      : await startService({
          secret,
          outboundUrl: receiver.url,
          bufferCapacity: scenario === "inbound" ? 1_000_000 : 1_000,
          deliveryTimeoutMs: 600_000,
          durable: values.durable,
          ...(cluster === undefined ? {} : { postgresUrl: await createDatabase(cluster.url, "profile") }),
          admin: values.admin,
          ...(values["no-timeline"] ? { timeline: "off" } : {}),
          nodeOptions,
        });
    let requests = 0;
    try {
      if (scenario === "inbound") {
        const result = await runLoad({
          url: service.url,
          headers: messageHeaders(secret),
          body: messageBody(),
          seconds,
        });
        requests = result.ok;
        process.stdout.write(`inbound: ${Math.round(result.requestsPerSecond)} req/s for ${seconds} s\n`);
      } else {
        const pool = createSenderPool(service.url);
        const rate = Number(values.rate);
        const sent = await sendPaced({ pool, url: service.url, secret, rate, seconds });
        await pool.close();
        requests = sent.accepted.size;
        process.stdout.write(`end-to-end: ${sent.accepted.size} accepted at ${rate}/s for ${seconds} s\n`);
      }
    } finally {
      // "refuse", not "answer": the parked backlog must not be delivered while recording.
      await receiver.setMode("refuse");
      await service.stop();
    }
    // One profile per thread: the main thread's, and the timeline writer's with a state_dir.
    const files = (await readdir(folder)).filter((name) => name.endsWith(".cpuprofile"));
    if (files.length === 0) throw new Error("the service wrote no .cpuprofile (did it exit cleanly?)");
    const sourceMaps = new Map();
    const dist = dirname(SERVICE_ENTRY);
    for (const name of (await readdir(dist)).filter((file) => file.endsWith(".js.map"))) {
      sourceMaps.set(
        name.slice(0, -".map".length),
        new SourceMap(JSON.parse(await readFile(join(dist, name), "utf8"))),
      );
    }
    if (sourceMaps.size === 0) process.stdout.write("no source maps in dist/: locations stay in dist/\n");
    for (const file of files) {
      const profile = JSON.parse(await readFile(join(folder, file), "utf8"));
      const { totalMs, self, inclusive } = analyse(profile, sourceMaps, Math.max(1, requests));
      process.stdout.write(
        `\n## ${file}\n\nCPU time sampled (idle excluded): ${Math.round(totalMs)} ms, ${((totalMs * 1000) / Math.max(1, requests)).toFixed(1)} µs per request\n`,
      );
      process.stdout.write(
        `\nTop self time:\n${self.join("\n")}\n\nInclusive, by file or package:\n${inclusive.join("\n")}\n`,
      );
    }
    process.stdout.write(`\nprofiles kept in ${folder} (open in Chrome DevTools)\n`);
  } catch (error) {
    await rm(folder, { recursive: true, force: true });
    throw error;
  } finally {
    await receiver.stop();
    await cluster?.stop();
  }
}

await main();
