import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

/**
 * Why a command that reads `state_dir` has nothing to read there, or undefined when `name` (the
 * state file or the timeline's) exists. Checked before opening: opening would create the folder
 * and an empty file, and the command would then report a false "nothing there" for a mistyped
 * path, or for a directory the service was started from elsewhere.
 */
export function missingStateFile(configFile: string, stateDir: string, name: string): string | undefined {
  const path = resolve(join(stateDir, name));
  if (existsSync(path)) return undefined;
  return `${configFile} keeps its state in ${resolve(stateDir)}, and there is no ${name} there: the service has not run with this state_dir yet, or the path is not the one it uses. Nothing was created.\n`;
}
