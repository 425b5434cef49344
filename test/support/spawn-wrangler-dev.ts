/**
 * `wrangler dev` of the repository's Worker as the tests run it: on loopback, with a given
 * environment file as its only source of variables (a developer's .dev.vars stays out), its
 * state in a folder of the test's own, no network (no Request.cf download, no metrics), in a
 * process group of its own so that the workerd it starts is stopped with it.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const WRANGLER = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin/wrangler.js");

/** A started `wrangler dev` and what it printed so far. */
export interface SpawnedWranglerDev {
  readonly child: ChildProcess;
  output(): string;
}

/** Spawns `wrangler dev` on `port`, state under `workDir/state`, variables from `envFile`. */
export function spawnWranglerDev(options: {
  readonly port: number;
  readonly inspectorPort: number;
  readonly workDir: string;
  readonly envFile: string;
}): SpawnedWranglerDev {
  const { port, inspectorPort, workDir, envFile } = options;
  let output = "";
  const child = spawn(
    process.execPath,
    [
      WRANGLER,
      "dev",
      "--config",
      join(ROOT, "wrangler.toml"),
      "--ip",
      "127.0.0.1",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      join(workDir, "state"),
      "--env-file",
      envFile,
      "--show-interactive-dev-session=false",
    ],
    {
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: {
        ...process.env,
        CI: "true",
        NO_COLOR: "1",
        WRANGLER_SEND_METRICS: "false",
        WRANGLER_HIDE_BANNER: "true",
        WRANGLER_LOG_PATH: join(workDir, "logs"),
        // No network in CI: do not try to download the Request.cf data.
        CLOUDFLARE_CF_FETCH_ENABLED: "false",
      },
    },
  );
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString("utf8");
  });
  return { child, output: () => output };
}

/** Ends wrangler and the workerd it started: the whole process group, SIGKILL after 5 s. */
export function stopWranglerDev(child: ChildProcess): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }, 5_000);
    child.once("exit", () => {
      clearTimeout(kill);
      resolve();
    });
    try {
      process.kill(-pid, "SIGTERM");
    } catch {
      clearTimeout(kill);
      resolve();
    }
  });
}
