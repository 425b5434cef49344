import { type ChildProcess, execFile, spawn } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** buildah on a storage of its own (vfs, in a folder of the test's), as CI runs it: chroot isolation. */
export interface Buildah {
  /** Runs `buildah <args>` to the end; resolves with its stdout, rejects with its output. */
  exec(args: readonly string[], timeoutMs?: number): Promise<string>;
  /** Starts `buildah <args>` and returns the process (its output piped). */
  spawn(args: readonly string[]): ChildProcess;
}

/**
 * A buildah whose images and containers live under `dir` (`--root`, `--runroot`), so that a run
 * neither depends on nor leaves anything in the machine's own container storage: removing `dir`
 * removes them all. vfs needs no kernel overlay support, which a CI machine may lack.
 */
export function createBuildah(dir: string): Buildah {
  const global = ["--root", join(dir, "storage"), "--runroot", join(dir, "run"), "--storage-driver", "vfs"];
  return {
    async exec(args, timeoutMs = 120_000) {
      try {
        const { stdout } = await run("buildah", [...global, ...args], {
          timeout: timeoutMs,
          maxBuffer: 64 * 1024 * 1024,
        });
        return stdout;
      } catch (error) {
        const output = error instanceof Error && "stderr" in error ? String(error.stderr) : "";
        throw new Error(
          `buildah ${args.slice(0, 2).join(" ")} failed: ${error instanceof Error ? error.message : String(error)}\n${output}`,
        );
      }
    },
    spawn(args) {
      return spawn("buildah", [...global, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    },
  };
}
