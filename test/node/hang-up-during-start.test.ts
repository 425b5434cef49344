/**
 * SIGHUP's default action ends the process. A reload asked for while the service is still
 * loading its modules (a supervisor's reload, a log rotation, right after a restart) must not kill
 * it: the entry takes the signal over before it loads anything else, as it takes SIGTERM and
 * SIGINT, so that a stop asked for then is graceful too.
 */
import { existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { waitFor } from "../support/wait-for.js";

const SECRET = "hang-up-during-start-secret-0123456789";
let spawned: Spawned | undefined;

afterEach(() => {
  spawned?.child.kill("SIGKILL");
  spawned = undefined;
});

/** Whether `pid` has a handler for SIGHUP now (bit 1 of `SigCgt`). */
function catchesHangUp(pid: number): boolean {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
  return mask !== undefined && (BigInt(`0x${mask}`) & 1n) === 1n;
}

// Module hooks (they run on a thread of the process) note, for each module the entry loads,
// whether SIGHUP was handled when it was asked for.
const HOOKS = `
import { appendFileSync, readFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const mask = /^SigCgt:\\s*([0-9a-f]+)$/m.exec(readFileSync("/proc/self/status", "utf8"))[1];
  const caught = (BigInt("0x" + mask) & 1n) === 1n;
  appendFileSync(process.env.RESOLVE_LOG, JSON.stringify({ specifier, caught }) + "\\n");
  return next(specifier, context);
}
`;

describe("a SIGHUP while the service starts", () => {
  it("is handled before the service's modules load", async () => {
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-hooks-"));
    const hooks = join(folder, "hooks.mjs");
    const register = join(folder, "register.mjs");
    const log = join(folder, "resolved.jsonl");
    await writeFile(hooks, HOOKS);
    await writeFile(
      register,
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    spawned = spawnNode("--import", [register, "dist/node.js", "--version"], { RESOLVE_LOG: log });
    expect(await spawned.exited).toBe(0);
    const resolved = (await readFile(log, "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { specifier: string; caught: boolean });
    const entry = resolved.findIndex((module) => module.specifier.endsWith("dist/node.js"));
    expect(entry).toBeGreaterThanOrEqual(0);
    const loadedAfter = resolved.slice(entry + 1);
    // The entry's own modules (the service, its dependencies) all load with the signal held, but
    // for the one it imports statically to hold it: the held signals' own (shared with cli.js).
    expect(loadedAfter.length).toBeGreaterThan(3);
    const before = loadedAfter.filter((module) => !module.caught);
    expect(before.length).toBeLessThanOrEqual(1);
    for (const module of before) {
      expect(readFileSync(join("dist", module.specifier), "utf8")).toContain("function holdHangUps(");
    }
  });

  it("is held and said, and the service starts", async () => {
    const config = await writeTempConfig(
      configDocument({ bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" }),
    );
    const started = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    spawned = started;
    const pid = started.child.pid ?? 0;
    // As soon as the process handles the signal, before it says anything.
    await waitFor(() => catchesHangUp(pid) || undefined, 10_000, "SIGHUP handled", 1);
    const saidBefore = started.lines.length;
    started.child.kill("SIGHUP");
    const url = await listeningUrl(started);
    expect(saidBefore).toBe(0);
    const said = started.lines.map((line) => JSON.parse(line) as { msg: string });
    expect(said.map((line) => line.msg)).toContain("SIGHUP received before the service started: not reloading");
    expect((await fetch(new URL("/healthz", url))).status).toBe(200);
  });

  it("SIGTERM while the modules load is held too: the start is abandoned, exit 0, not killed", async () => {
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-hold-"));
    const hooks = join(folder, "hooks.mjs");
    const register = join(folder, "register.mjs");
    const waiting = join(folder, "waiting");
    const go = join(folder, "go");
    // The service's own module waits, unresolved, until the test says go: the entry is then
    // loading its modules, as it is for a while at every start.
    await writeFile(
      hooks,
      `import { existsSync, writeFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
export async function resolve(specifier, context, next) {
  if (specifier.includes("run-service")) {
    writeFileSync(${JSON.stringify(waiting)}, "");
    while (!existsSync(${JSON.stringify(go)})) await sleep(10);
  }
  return next(specifier, context);
}
`,
    );
    await writeFile(
      register,
      `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
    );
    const config = await writeTempConfig(
      configDocument({ bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" }),
    );
    const started = spawnNode("--import", [register, "dist/node.js", "--config", config], { WEBHOOK_SECRET: SECRET });
    spawned = started;
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
      started.child.on("exit", (code, signal) => done({ code, signal })),
    );
    await waitFor(() => existsSync(waiting) || undefined, 10_000, "the modules loading");
    started.child.kill("SIGTERM");
    await writeFile(go, "");
    expect(await exited).toEqual({ code: 0, signal: null });
    const said = started.lines.map((line) => JSON.parse(line) as { msg: string });
    expect(said.map((line) => line.msg)).toContain("start abandoned before anything was opened");
  });

  it.each([
    [["dist/node.js"], "run-service"],
    [["dist/cli.js", "serve"], "run-cli"],
  ])(
    "SIGTERM while the event loop is busy loading %j is not lost when the service takes the signal over",
    async (command, module) => {
      const folder = await mkdtemp(join(tmpdir(), "webhook-channel-busy-"));
      const hooks = join(folder, "hooks.mjs");
      const register = join(folder, "register.mjs");
      const busy = join(folder, "busy");
      // The service's own module, when it runs, first says so, then holds the event loop for a
      // while, as evaluating the service's modules does at every start: a signal then waits in
      // the handle of the listener that held it.
      await writeFile(
        hooks,
        `export async function load(url, context, next) {
  const loaded = await next(url, context);
  if (!url.includes(${JSON.stringify(module)})) return loaded;
  const prefix = 'import { writeFileSync as __said } from "node:fs"; __said(' + ${JSON.stringify(JSON.stringify(busy))} + ', ""); { const __from = Date.now(); while (Date.now() - __from < 1500); }\\n';
  return { ...loaded, source: prefix + String(loaded.source) };
}
`,
      );
      await writeFile(
        register,
        `import { register } from "node:module";\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
      );
      const config = await writeTempConfig(
        configDocument({ bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" }),
      );
      const started = spawnNode("--import", [register, ...command, "--config", config], { WEBHOOK_SECRET: SECRET });
      spawned = started;
      const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
        started.child.on("exit", (code, signal) => done({ code, signal })),
      );
      await waitFor(() => existsSync(busy) || undefined, 10_000, "the service's module running");
      started.child.kill("SIGTERM");
      const ended = await Promise.race([
        exited,
        new Promise<"running">((done) => setTimeout(() => done("running"), 10_000)),
      ]);
      expect(ended).toEqual({ code: 0, signal: null });
    },
  );
});
