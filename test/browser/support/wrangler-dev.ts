import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../support/free-port.js";
import { spawnWranglerDev, stopWranglerDev } from "../../support/spawn-wrangler-dev.js";

/** A running `wrangler dev` of the repository's Worker. */
export interface WranglerDev {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  /** What wrangler and workerd printed so far. */
  output(): string;
  stop(): Promise<void>;
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
  const { child, output: printed } = spawnWranglerDev({ port, inspectorPort, workDir, envFile });
  const stop = async (): Promise<void> => {
    await stopWranglerDev(child);
    await rm(workDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited (${child.exitCode}):\n${printed()}`);
    const up = await fetch(`${origin}/healthz`).then(
      (response) => response.status === 200,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`wrangler dev did not answer /healthz within 60 s:\n${printed()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { origin, output: printed, stop };
}
