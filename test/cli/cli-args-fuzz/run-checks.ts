import type { CliRun } from "../../support/run-cli-captured.js";
import { commandKey, EXIT_CODES } from "./command-grammar.js";
import { NO_TEXT_WORDS } from "./fuzz-secrets.js";
import type { FuzzCase } from "./generate-argv.js";

/** What one run came to: what it printed and its status, or what it threw. */
export type Outcome = { readonly run: CliRun; readonly ms: number } | { readonly threw: unknown };

/** A run slower than this waited on something it should not (the fuzz reaches no live service). */
const SLOW_MS = 5_000;

/**
 * What is wrong with one run, empty when it keeps the rule: nothing thrown; an exit status
 * docs/cli.md gives the command; a usage error (2) that says what is wrong on stderr, after
 * `webhook-channel:`, and prints nothing on stdout; a failure (1) that says why; never a
 * planted secret, nor `undefined` or `[object Object]` where the input had none.
 */
export function runFaults(
  c: FuzzCase,
  outcome: Outcome,
  secrets: readonly (readonly [name: string, value: string])[],
): string[] {
  if ("threw" in outcome) {
    const error = outcome.threw;
    return [`threw ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`];
  }
  const { run, ms } = outcome;
  const faults: string[] = [];
  const allowed = EXIT_CODES[commandKey(c.argv)] ?? [];
  if (!allowed.includes(run.code)) faults.push(`exit ${run.code}, not one of ${allowed.join(", ")}`);
  if (run.code === 2) {
    if (run.err.trim() === "") faults.push("a usage error with nothing on stderr");
    else if (!run.err.startsWith("webhook-channel: "))
      faults.push("a usage error that does not start 'webhook-channel: '");
    if (run.out !== "") faults.push("a usage error that prints on stdout");
  }
  if (run.code === 1 && run.err.trim() === "") faults.push("exit 1 with nothing on stderr");
  if (run.code === 0 && run.out === "" && run.err === "") faults.push("exit 0 without a word");
  for (const [stream, text] of [
    ["stdout", run.out],
    ["stderr", run.err],
  ] as const) {
    for (const [name, secret] of secrets) if (text.includes(secret)) faults.push(`${stream} holds ${name}`);
    const given = [...c.argv, ...Object.values(c.env)].join(" ");
    for (const word of NO_TEXT_WORDS) {
      if (text.includes(word) && !given.includes(word)) faults.push(`${stream} holds '${word}'`);
    }
  }
  if (ms > SLOW_MS) faults.push(`took ${ms} ms`);
  return faults;
}
