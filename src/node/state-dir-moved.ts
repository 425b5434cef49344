import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { ConfigProblem } from "../core/config/config-problem.js";
import { STATE_FILE, TIMELINE_FILE } from "./state/sqlite/state-file.js";

/**
 * A relative `state_dir` is read against the configuration file's folder; webhook-channel 0.1.0
 * read it against the working directory. Started as before after an upgrade, the service would
 * begin with an empty state beside the file and leave the accepted messages, sequence numbers,
 * conversation memory and dead letters of the old place behind, without a word. So when the old
 * place holds a state file and the new one holds none, the start is refused, naming both.
 */
export function movedStateDirProblem(written: string, configFile: string, cwd: string): ConfigProblem | undefined {
  const now = resolve(dirname(resolve(configFile)), written);
  const before = resolve(cwd, written);
  if (now === before) return undefined;
  if (!existsSync(join(before, STATE_FILE)) || existsSync(join(now, STATE_FILE))) return undefined;
  return {
    path: "state_dir",
    message: `"${written}" is read relative to the configuration file's folder, as ${now}, which holds no state yet; the state of an earlier run is in ${before} (relative to the working directory, where webhook-channel 0.1.0 read it)`,
    fix: `stop the service, move ${[STATE_FILE, ...(existsSync(join(before, TIMELINE_FILE)) ? [TIMELINE_FILE] : [])].join(" and ")} (each with its -wal and -shm files, where there are) from ${before} into ${now}, and start it again; or set state_dir to the absolute path of the state to use (which also settles it if ${before} holds another service's state)`,
  };
}
