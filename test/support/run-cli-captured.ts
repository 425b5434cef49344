import { runCli } from "../../src/cli/run-cli.js";

/** What one CLI run printed, and its exit status. */
export interface CliRun {
  readonly code: number;
  readonly out: string;
  readonly err: string;
}

/** Runs the CLI in this process with `env` as its whole environment, capturing what it prints. */
export async function runCliCaptured(args: readonly string[], env: Record<string, string> = {}): Promise<CliRun> {
  let out = "";
  let err = "";
  const code = await runCli([...args], {
    env,
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  return { code, out, err };
}
