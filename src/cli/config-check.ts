import { formatProblem } from "../core/config/config-problem.js";
import { preflight } from "../core/config/preflight.js";
import { readConfigFile } from "../node/read-config-file.js";
import type { CliIo } from "./run-cli.js";

/**
 * `config check [--preflight] <file>`: prints each problem with its JSON path and fix.
 * Exit 0 when usable (warnings allowed), 1 when problems were found. Never prints a secret.
 */
export async function runConfigCheck(file: string, withPreflight: boolean, io: CliIo): Promise<number> {
  const result = await readConfigFile(file);
  if (!result.ok) {
    io.err(`${file}: ${result.problems.length} problem(s)\n`);
    for (const problem of result.problems) io.err(`  error   ${formatProblem(problem)}\n`);
    return 1;
  }
  const problems = withPreflight ? preflight(result.config, (name) => io.env[name]) : [];
  for (const warning of result.warnings) io.err(`  warning ${formatProblem(warning)}\n`);
  for (const problem of problems) io.err(`  error   ${formatProblem(problem)}\n`);
  if (problems.length > 0) {
    io.err(`${file}: ${problems.length} problem(s) in the environment\n`);
    return 1;
  }
  io.out(`${file}: OK${withPreflight ? " (environment confirmed)" : ""}\n`);
  return 0;
}
