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

/** Runs `node <script> ...args` from the repository root with the given extra environment. */
export function spawnNode(script: string, args: readonly string[], env: Record<string, string | undefined>): Spawned {
  const child = spawn(process.execPath, [script, ...args], {
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
    lines.push(...parts);
  });
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, stderr, exited };
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
