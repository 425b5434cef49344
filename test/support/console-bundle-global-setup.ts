/**
 * Vitest global setup of every project that runs the core from its sources: writes the
 * console's generated script and style (scripts/build-console.mjs) before any test imports the
 * core, so that a single test file run with `npx vitest run` serves the console as src/console/
 * is now, not as the last build left it.
 */
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export default function setup(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/build-console.mjs", import.meta.url))], {
    stdio: "inherit",
  });
}
