import { spawnSync } from "node:child_process";

/**
 * Whether promtool (Debian package `prometheus`) can run. CI installs it, so there a missing
 * promtool fails the tests that need it instead of skipping them.
 */
export function promtoolAvailable(): boolean {
  const found = spawnSync("promtool", ["--version"], { encoding: "utf8" });
  if (found.error === undefined && found.status === 0) return true;
  if (process.env.CI === "true") throw new Error("promtool is missing in CI: .ci/run installs the prometheus package");
  console.warn("promtool is missing: the promtool checks are skipped (apt-get install -y prometheus to run them)");
  return false;
}

/** Runs promtool with `args` and `input` on stdin; its exit status and output. */
export function promtool(args: readonly string[], input?: string): { status: number | null; output: string } {
  const run = spawnSync("promtool", args, { encoding: "utf8", ...(input === undefined ? {} : { input }) });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
