import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const WRANGLER = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin/wrangler.js");

/** A running `wrangler dev` of the repository's Worker. */
export interface WranglerDev {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** What wrangler and workerd printed so far. */
  output(): string;
  stop(): Promise<void>;
}

/** A port that was free a moment ago (wrangler needs a number, not 0). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts `wrangler dev` on loopback with `vars` as its only environment file (CONFIG_JSON and
 * the secrets; a developer's .dev.vars stays out), its state in a fresh directory, as
 * `test/workers/node/wrangler-dev.test.ts` does; resolves once `/healthz` answers.
 */
export async function startWranglerDev(vars: Readonly<Record<string, string>>): Promise<WranglerDev> {
  const workDir = await mkdtemp(join(tmpdir(), "webhook-channel-console-"));
  const envFile = join(workDir, "test.env");
  await writeFile(
    envFile,
    `${Object.entries(vars)
      .map(([name, value]) => `${name}='${value}'`)
      .join("\n")}\n`,
  );
  const port = await freePort();
  const inspectorPort = await freePort();
  const origin = `http://127.0.0.1:${port}`;
  let output = "";
  const child: ChildProcess = spawn(
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
  const stop = async (): Promise<void> => {
    await stopGroup(child);
    await rm(workDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${output}`);
    const up = await fetch(`${origin}/healthz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not answer /healthz within 60 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { origin, output: () => output, stop };
}

/** Ends wrangler and the workerd it started: the whole process group, SIGKILL after 5 s. */
function stopGroup(child: ChildProcess): Promise<void> {
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
