// One closed-loop load run with wrk (C, one thread), used instead of autocannon when it is
// installed (Debian: apt-get install wrk). On a 2-core machine the load generator takes CPU
// from the server it measures; wrk needs far less per request than autocannon, so the
// servers get closer to a core each and the ratio says more about them.
//
// wrk can stop a thread after N answers but then still sleeps to the end of -d and reports
// -d as the duration, so runs are timed (seconds), not counted: a faster server answers and
// keeps more messages in the same time, which, if anything, costs it memory and GC.
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** True when a `wrk` binary answers on PATH. */
export function wrkAvailable() {
  const probe = spawnSync("wrk", ["--version"], { encoding: "utf8" });
  return probe.error === undefined && /^wrk /m.test(`${probe.stdout}${probe.stderr}`);
}

// A Lua long string cannot contain its own closing bracket; the bench's values never do.
const luaString = (value) => {
  if (value.includes("]==]")) throw new Error("value cannot be quoted for Lua");
  return `[==[${value}]==]`;
};

function script(headers, body) {
  const lines = ['wrk.method = "POST"', `wrk.body = ${luaString(body)}`];
  for (const [name, value] of Object.entries(headers))
    lines.push(`wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  // done() runs once after the run: one JSON line that the parent parses.
  lines.push(
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format(\'{"wrk":1,"requests":%d,"durationUs":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50Us":%d,"p99Us":%d}\\n\',',
    "    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,",
    "    latency:percentile(50), latency:percentile(99)))",
    "end",
  );
  return `${lines.join("\n")}\n`;
}

/**
 * Loads `url` for `seconds` with `connections` connections POSTing `body`. Returns the same
 * shape as runLoad (load.mjs): accepted rate, p50/p99 in ms, and counts of everything else.
 * wrk counts statuses of 400 and above without telling them apart, so non2xxStatuses holds
 * one entry, "4xx/5xx".
 */
export async function runWrk({ url, headers, body, connections = 10, seconds }) {
  const folder = await mkdtemp(join(tmpdir(), "webhook-wrk-"));
  try {
    const file = join(folder, "post.lua");
    await writeFile(file, script(headers, body));
    const duration = Math.max(1, Math.round(seconds));
    const args = ["-t1", `-c${connections}`, `-d${duration}s`, "--timeout", "10s", "-s", file, url];
    const output = await new Promise((resolve, reject) => {
      const child = spawn("wrk", args, { stdio: ["ignore", "pipe", "pipe"] });
      let text = "";
      child.stdout.on("data", (chunk) => {
        text += chunk;
      });
      child.stderr.on("data", (chunk) => {
        text += chunk;
      });
      child.on("error", reject);
      // "close", not "exit": only then has all of its output been read.
      child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))));
    });
    const line = output.split("\n").find((candidate) => candidate.startsWith('{"wrk":1'));
    if (line === undefined) throw new Error(`wrk printed no summary:\n${output}`);
    const summary = JSON.parse(line);
    const elapsed = summary.durationUs / 1e6;
    const ok = summary.requests - summary.status;
    return {
      seconds: elapsed,
      requestsPerSecond: ok / elapsed,
      ok,
      non2xx: summary.status,
      non2xxStatuses: summary.status > 0 ? { "4xx/5xx": summary.status } : {},
      errors: summary.connect + summary.read + summary.write,
      timeouts: summary.timeout,
      // wrk's percentiles cover every answer, refused ones included; with none refused
      // (the normal case) they are the accepted requests' latencies.
      p50: summary.p50Us / 1000,
      p99: summary.p99Us / 1000,
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
