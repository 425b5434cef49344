import type { ChildProcess } from "node:child_process";
import { existsSync, realpathSync } from "node:fs";
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readConfigFile } from "../../src/node/read-config-file.js";
import { STATE_FILE } from "../../src/node/state/sqlite/sqlite-state.js";
import { spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { waitFor } from "../support/wait-for.js";

const SECRET = "state-dir-secret-123456";
let child: ChildProcess | undefined;

afterEach(() => {
  child?.kill("SIGKILL");
  child = undefined;
});

function configWith(stateDir: string | undefined): unknown {
  return {
    ...(stateDir === undefined ? {} : { state_dir: stateDir }),
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
  };
}

interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** Starts dist/node.js with `cwd` as its working directory; resolves its log lines once it listens. */
async function startIn(cwd: string, config: string): Promise<{ lines: LogLine[]; exited: Promise<number | null> }> {
  const lines: LogLine[] = [];
  const started = spawnNode(
    resolve("dist/node.js"),
    ["--config", config],
    { WEBHOOK_SECRET: SECRET },
    { cwd, onLine: (text) => lines.push(JSON.parse(text) as LogLine) },
  );
  child = started.child;
  await waitFor(() => lines.find((line) => line.msg === "listening"), 10_000, "the listening line");
  return { lines, exited: started.exited };
}

describe("state_dir location", () => {
  it("resolves a relative state_dir against the config file's folder, not the working directory", async () => {
    const config = await writeTempConfig(configWith("state"));
    const result = await readConfigFile(config);
    expect(result.ok && result.config.state_dir).toBe(join(dirname(config), "state"));
  });

  it("keeps an absolute state_dir as it is", async () => {
    const absolute = await mkdtemp(join(tmpdir(), "webhook-channel-state-"));
    const result = await readConfigFile(await writeTempConfig(configWith(absolute)));
    expect(result.ok && result.config.state_dir).toBe(absolute);
  });

  it("started from another directory, creates the state next to the config and logs its absolute path and the resumed count", async () => {
    const config = await writeTempConfig(configWith("state"));
    const elsewhere = await mkdtemp(join(tmpdir(), "webhook-channel-cwd-"));
    const { lines, exited } = await startIn(elsewhere, config);

    const expected = join(dirname(config), "state", STATE_FILE);
    expect(existsSync(expected)).toBe(true);
    expect(existsSync(join(elsewhere, "state"))).toBe(false);
    const state = lines.find((line) => line.msg === "state");
    expect(state).toMatchObject({ level: "info", mode: "sqlite" });
    expect(realpathSync(String(state?.path))).toBe(realpathSync(expected));
    expect(lines.find((line) => line.msg === "resumed unfinished messages from state_dir")).toMatchObject({
      level: "info",
      count: 0,
    });

    child?.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("refuses a relative state_dir whose state an earlier release left under the working directory", async () => {
    const config = await writeTempConfig(configWith("./state"));
    const cwd = await mkdtemp(join(tmpdir(), "webhook-channel-cwd-"));
    await mkdir(join(cwd, "state"));
    await writeFile(join(cwd, "state", STATE_FILE), "");
    const result = await readConfigFile(config, undefined, cwd);
    expect(result.ok).toBe(false);
    const problem = result.ok ? undefined : result.problems[0];
    expect(problem?.path).toBe("state_dir");
    expect(problem?.message).toContain(join(dirname(config), "state"));
    expect(problem?.message).toContain(join(cwd, "state"));
    expect(problem?.fix).toMatch(/^stop the service, move /);

    // Once the state is where the file's folder says (moved, or begun there), nothing is refused.
    await mkdir(join(dirname(config), "state"));
    await writeFile(join(dirname(config), "state", STATE_FILE), "");
    expect((await readConfigFile(config, undefined, cwd)).ok).toBe(true);
  });

  it("without state_dir, logs that the state is kept in memory", async () => {
    const config = await writeTempConfig(configWith(undefined));
    const { lines } = await startIn(dirname(config), config);
    expect(lines.find((line) => line.msg === "state")).toMatchObject({ level: "info", mode: "memory" });
    expect(lines.some((line) => line.msg === "resumed unfinished messages from state_dir")).toBe(false);
  });
});
