import type { CliRun } from "../../support/run-cli-captured.js";
import { EXIT_CODES } from "./command-grammar.js";

/**
 * What the runs must have said, each at least once, or the seed is too weak to keep: the ends
 * of every source (a refused `--url`, an unreachable service, Postgres, a state_dir without its
 * file, one without state, the timeline off), the values refused by name, help and keys.
 */
export const MILESTONES: readonly (readonly [string, (run: CliRun) => boolean])[] = [
  ["a usage error with its command's usage", (run) => run.code === 2 && run.err.includes("\nusage: ")],
  ["an unknown option", (run) => run.err.includes("Unknown option")],
  ["an option without its value", (run) => /argument missing|argument is ambiguous/.test(run.err)],
  ["a --url that is no base URL", (run) => run.err.includes("--url must be the service's base URL")],
  ["a service that cannot be reached", (run) => /ECONNREFUSED|fetch failed/.test(run.err)],
  ["no admin secret", (run) => run.err.includes("it must hold the service's admin secret")],
  ["a Postgres source", (run) => run.err.startsWith("PG_URL: ")],
  ["an unset Postgres URL", (run) => run.err.includes("PG_URL is not set")],
  ["a state_dir without its file", (run) => run.err.includes("Nothing was created.")],
  ["a file without state", (run) => /has no "state_dir"|has neither "state_dir"/.test(run.err)],
  ["the timeline off", (run) => run.err.includes("turns the message timeline off")],
  ["a configuration with problems", (run) => run.err.includes("problem(s)")],
  ["a configuration that is OK", (run) => run.code === 0 && run.out.includes(": OK")],
  ["the environment confirmed", (run) => run.out.includes("(environment confirmed)")],
  ["dead letters listed", (run) => run.code === 0 && run.err.includes("dead letter(s)")],
  ["no message found", (run) => /no message matches|no message with id/.test(run.err)],
  ["a value refused by name", (run) => /--(limit|status|since|cursor) must be/.test(run.err)],
  ["a command's help", (run) => run.code === 0 && run.out.startsWith("usage: ")],
  ["a public key", (run) => run.code === 0 && run.out.startsWith("whpk_")],
  ["a signing key refused", (run) => run.code === 1 && run.err.includes("whsk_")],
];

/** Exit statuses by command, and the milestones reached. */
export class Coverage {
  readonly codes = new Map<string, Map<number, number>>();
  readonly reached = new Set<string>();

  /** Counts one run of `command` (as commandKey names it). */
  add(command: string, run: CliRun): void {
    const codes = this.codes.get(command) ?? new Map<number, number>();
    codes.set(run.code, (codes.get(run.code) ?? 0) + 1);
    this.codes.set(command, codes);
    for (const [name, test] of MILESTONES) if (test(run)) this.reached.add(name);
  }

  /** The exit statuses a command may end with that no run of it ended with ("command exit n"). */
  missingCodes(): string[] {
    return Object.entries(EXIT_CODES).flatMap(([command, codes]) =>
      codes.filter((code) => (this.codes.get(command)?.get(code) ?? 0) === 0).map((code) => `${command} exit ${code}`),
    );
  }

  /** The milestones no run reached. */
  missingMilestones(): string[] {
    return MILESTONES.map(([name]) => name).filter((name) => !this.reached.has(name));
  }

  /** A line for the failure messages: each command's exit statuses and their counts. */
  summary(): string {
    return [...this.codes]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([command, codes]) => `${command} ${[...codes].map(([code, n]) => `${code}:${n}`).join("/")}`)
      .join(", ");
  }
}
