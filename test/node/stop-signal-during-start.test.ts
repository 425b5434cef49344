/**
 * A supervisor (systemd, Kubernetes, a script) may stop the service at any moment of its start,
 * as soon as it logs `listening` among others: the stop must be graceful (exit 0, nothing
 * dropped), never the default action of the signal (killed, no drain, no flush).
 */
import { type ChildProcess, execFileSync } from "node:child_process";
import { open, writeFile } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import { freePort } from "../support/free-port.js";
import { createTestDatabase } from "../support/postgres-cluster.js";
import { spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { startTcpGate, type TcpGate } from "../support/tcp-gate.js";
import { waitFor } from "../support/wait-for.js";

const SECRET = "stop-during-start-secret-0123456789abcdef";
const DURING_START = "SIGTERM received during the start: stopping as soon as it can";
const COMPLETE = "shutdown complete: every accepted message was finished";
let child: ChildProcess | undefined;
let gate: TcpGate | undefined;

afterEach(async () => {
  child?.kill("SIGKILL");
  child = undefined;
  await gate?.close();
  gate = undefined;
});

type LogLine = { readonly level: string; readonly msg: string } & Record<string, unknown>;

interface Run {
  readonly lines: LogLine[];
  /** The exit code and the signal that ended it, once all its output was read. */
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function configWith(channels: readonly { name: string; bind: string }[], extra: object = {}): unknown {
  return {
    channels: channels.map(({ name, bind }) => ({
      type: "webhook",
      name,
      token_env: "WEBHOOK_SECRET",
      webhook: { bind, outbound_url: "http://127.0.0.1:9/replies" },
    })),
    routes: channels.map(({ name }) => ({ channel: name, brain: "echo" })),
    shutdown_timeout_ms: 2_000,
    ...extra,
  };
}

/**
 * Runs `node dist/node.js`; `onLine` sees each log line in the handler of the output that
 * carries it, as a supervisor acting on a line does, before anything else is read.
 */
function run(config: string, env: Record<string, string> = {}, onLine: (line: LogLine) => void = () => {}): Run {
  const lines: LogLine[] = [];
  const started = spawnNode(
    resolve("dist/node.js"),
    ["--config", config],
    { WEBHOOK_SECRET: SECRET, ...env },
    {
      onLine: (text) => {
        const line = JSON.parse(text) as LogLine;
        lines.push(line);
        onLine(line);
      },
    },
  );
  child = started.child;
  // "close", not "exit": every line it wrote has been read by then.
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    started.child.on("close", (code, signal) => done({ code, signal })),
  );
  return { lines, ended };
}

const logged = (lines: readonly LogLine[], msg: string): boolean => lines.some((line) => line.msg === msg);

/** A service on Postgres through a gate, which the test holds up so that the start cannot finish meanwhile. */
async function gatedPostgresConfig(): Promise<{ config: string; env: Record<string, string> }> {
  const database = new URL(await createTestDatabase(inject("postgresUrl")));
  gate = await startTcpGate(database.hostname, Number(database.port));
  database.hostname = "127.0.0.1";
  database.port = String(gate.port);
  const config = await writeTempConfig(
    configWith([{ name: "webhook", bind: "127.0.0.1:0" }], { postgres_url_env: "DATABASE_URL" }),
  );
  return { config, env: { DATABASE_URL: database.toString() } };
}

describe("a stop signal while node dist/node.js starts", () => {
  it("SIGTERM the moment it logs listening: a graceful stop and exit 0, every time", async () => {
    // Two listeners: the first `listening` line comes while the second socket is still to open.
    const config = await writeTempConfig(
      configWith([
        { name: "first", bind: "127.0.0.1:0" },
        { name: "second", bind: `127.0.0.1:${await freePort()}` },
      ]),
    );
    for (let attempt = 0; attempt < 5; attempt++) {
      let sent = false;
      const started = run(config, {}, (line) => {
        if (sent || line.msg !== "listening") return;
        sent = true;
        child?.kill("SIGTERM");
      });
      expect({ attempt, ...(await started.ended) }).toEqual({ attempt, code: 0, signal: null });
      expect(logged(started.lines, COMPLETE)).toBe(true);
    }
  });

  it("SIGTERM in the middle of the start: the start finishes, then the service stops gracefully", async () => {
    const { config, env } = await gatedPostgresConfig();
    const started = run(config, env, (line) => {
      if (line.msg !== "state") return;
      // The rest of the start (the replica's lease) waits on the database from here.
      gate?.hold();
      child?.kill("SIGTERM");
    });
    await waitFor(() => (logged(started.lines, DURING_START) ? true : undefined), 10_000, "the signal's line");
    expect(logged(started.lines, "listening")).toBe(false);
    gate?.release();

    expect(await started.ended).toEqual({ code: 0, signal: null });
    const order = started.lines.map((line) => line.msg);
    const listening = order.indexOf("listening");
    const stopping = order.indexOf("shutting down: refusing new messages, finishing accepted ones");
    expect(listening).toBeGreaterThan(order.indexOf(DURING_START));
    expect(stopping).toBeGreaterThan(listening);
    expect(order.indexOf(COMPLETE)).toBeGreaterThan(stopping);
  });

  it("a second signal during the start exits at once with status 1", async () => {
    const { config, env } = await gatedPostgresConfig();
    const started = run(config, env, (line) => {
      if (line.msg === "state") {
        gate?.hold();
        child?.kill("SIGTERM");
      } else if (line.msg === DURING_START) {
        child?.kill("SIGINT");
      }
    });
    expect(await started.ended).toEqual({ code: 1, signal: null });
    expect(started.lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: "SIGINT received again: exiting without waiting" }),
    );
    expect(logged(started.lines, "listening")).toBe(false);
  });

  it("SIGTERM while the configuration is still being read: exits 0 without starting", async () => {
    // A named pipe as the configuration file: the service's read of it waits for this test's write.
    const config = join(dirname(await writeTempConfig({})), "config-pipe.json");
    execFileSync("mkfifo", [config]);
    const started = run(config);
    // Opening the pipe for writing returns once the service has opened it to read.
    const pipe = await open(config, "w");
    child?.kill("SIGTERM");
    await writeFile(pipe, JSON.stringify(configWith([{ name: "webhook", bind: "127.0.0.1:0" }])));
    await pipe.close();

    expect(await started.ended).toEqual({ code: 0, signal: null });
    expect(started.lines).toContainEqual(
      expect.objectContaining({ level: "info", msg: "start abandoned before anything was opened", signal: "SIGTERM" }),
    );
    expect(logged(started.lines, "state")).toBe(false);
  });
});
