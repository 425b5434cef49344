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

/** Runs wrk with `args` and returns the line of its output that starts with `prefix`, parsed. */
async function wrkSummary(args, prefix) {
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
    child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`wrk exited ${code}: ${text}`))));
  });
  const line = output.split("\n").find((candidate) => candidate.startsWith(prefix));
  if (line === undefined) throw new Error(`wrk printed no summary:\n${output}`);
  return JSON.parse(line);
}

/**
 * The script of the saturation load: each request carries the next of `conversations`
 * conversations in turn (`head` + index + `tail` is the body), made once in init() so that a
 * request costs wrk no string work; each answer other than 200 is counted by status and by the
 * problem's `code`, so that a 503 can be told from any other refusal.
 */
function conversationsScript(headers, head, tail, conversations) {
  const lines = ['wrk.method = "POST"', `local head = ${luaString(head)}`, `local tail = ${luaString(tail)}`];
  for (const [name, value] of Object.entries(headers))
    lines.push(`wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`);
  lines.push(
    "local requests = {}",
    "local next_index = 0",
    "refusals = {}",
    "local threads = {}",
    "function setup(thread) table.insert(threads, thread) end",
    "function init(args)",
    `  for i = 0, ${conversations - 1} do requests[i + 1] = wrk.format(nil, nil, nil, head .. i .. tail) end`,
    "end",
    "function request()",
    "  next_index = next_index % #requests + 1",
    "  return requests[next_index]",
    "end",
    "function response(status, headers, body)",
    "  if status ~= 200 then",
    '    local code = string.match(body, \'"code":"([^"]*)"\') or \'?\'',
    '    local key = status .. " " .. code',
    "    refusals[key] = (refusals[key] or 0) + 1",
    "  end",
    "end",
    "function done(summary, latency, requests)",
    "  local e = summary.errors",
    "  local parts = {}",
    "  for _, thread in ipairs(threads) do",
    "    for key, count in pairs(thread:get('refusals')) do",
    "      table.insert(parts, string.format('\"%s\":%d', key, count))",
    "    end",
    "  end",
    '  io.write(string.format(\'{"wrk":2,"requests":%d,"durationUs":%d,"status":%d,"connect":%d,"read":%d,"write":%d,"timeout":%d,"p50Us":%d,"p99Us":%d,"refusals":{%s}}\\n\',',
    "    summary.requests, summary.duration, e.status, e.connect, e.read, e.write, e.timeout,",
    '    latency:percentile(50), latency:percentile(99), table.concat(parts, ",")))',
    "end",
  );
  return `${lines.join("\n")}\n`;
}

/**
 * Closed-loop load for the saturation phase: `connections` connections for `seconds` (whole
 * seconds), POSTing `body(conversation)` for conversations 0 … `conversations` − 1 in turn.
 * Resolves when wrk ends with the 2xx count, the refusals by "status code" (e.g. "503
 * buffer_full"), connection errors and timeouts, and wrk's own duration.
 */
export async function runWrkConversations({ url, headers, body, conversations = 1000, connections = 10, seconds }) {
  const marker = "@@conversation@@";
  const [head, tail] = body(marker).split(marker);
  const folder = await mkdtemp(join(tmpdir(), "webhook-wrk-"));
  try {
    const file = join(folder, "conversations.lua");
    await writeFile(file, conversationsScript(headers, head, tail, conversations));
    const args = ["-t1", `-c${connections}`, `-d${Math.max(1, Math.round(seconds))}s`, "--timeout", "10s"];
    const summary = await wrkSummary([...args, "-s", file, url], '{"wrk":2');
    return {
      seconds: summary.durationUs / 1e6,
      ok: summary.requests - summary.status,
      refusals: summary.refusals,
      errors: summary.connect + summary.read + summary.write,
      timeouts: summary.timeout,
      p50: summary.p50Us / 1000,
      p99: summary.p99Us / 1000,
    };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
