import { spawnSync } from "node:child_process";
import { requireTool } from "../../support/test-tools.js";

/**
 * Runs promtool (Debian package `prometheus`) with `args` and `input` on stdin; its exit status
 * and output. A missing promtool fails the test, naming the package (npm run test:tools installs it).
 */
export function promtool(args: readonly string[], input?: string): { status: number | null; output: string } {
  const run = spawnSync(requireTool("promtool", "test"), args, {
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
  });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}
