import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { waitFor } from "./wait-for.js";

/** A child process with its stdout split into lines as they arrive. */
export interface Spawned {
  readonly child: ChildProcess;
  readonly lines: string[];
  readonly stderr: string[];
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** Where a spawned process runs, and who sees its lines as they come. */
export interface SpawnOptions {
  /** Its working directory; the repository root by default. */
  readonly cwd?: string;
  /** Sees each stdout line in the handler of the output that carries it, before anything else is read. */
  readonly onLine?: (line: string) => void;
}

/** Runs `node <script> ...args` with no environment but PATH and `env`. */
export function spawnNode(
  script: string,
  args: readonly string[],
  env: Record<string, string | undefined>,
  options: SpawnOptions = {},
): Spawned {
  const child = spawn(process.execPath, [script, ...args], {
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    env: { PATH: process.env.PATH, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const stderr: string[] = [];
  let buffered = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString();
    const parts = buffered.split("\n");
    buffered = parts.pop() ?? "";
    for (const part of parts) {
      lines.push(part);
      options.onLine?.(part);
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, stderr, exited };
}

/**
 * Runs the built command (`dist/cli.js`, as `npx webhook-channel` runs it) as a process, with no
 * environment but PATH and `env`; `out` is its standard output's lines joined again.
 */
export async function runBuiltCli(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  const run = spawnNode("dist/cli.js", args, env);
  // "close", not "exit": only then has all of a longer output (a timeline's JSON) been read.
  const code = await new Promise<number | null>((resolve) => run.child.once("close", resolve));
  return { code, out: run.lines.join("\n"), err: run.stderr.join("") };
}

/** Writes a configuration document to a new temporary folder and returns its path. */
export async function writeTempConfig(document: unknown): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "webhook-channel-"));
  const file = join(folder, "config.json");
  await writeFile(file, JSON.stringify(document, null, 2));
  return file;
}

/** The URL of the first `listening` log line of a started service. */
export async function listeningUrl(process: Spawned): Promise<string> {
  const line = await waitFor(
    () =>
      process.lines
        .map((text) => JSON.parse(text) as { msg: string; url?: string })
        .find((entry) => entry.msg === "listening"),
    10_000,
    "the listening line",
  );
  if (line.url === undefined) throw new Error("listening line without url");
  return line.url;
}
