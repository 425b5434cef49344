import { readFile } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { errorMessage } from "../core/channel-error.js";
import { parseConfigJson } from "../core/config/config-json/parse-config-json.js";
import { type ConfigResult, validateConfig } from "../core/config/validate-config.js";
import { isRecord } from "../core/is-record.js";
import { movedStateDirProblem } from "./state-dir-moved.js";

/**
 * Reads and validates a configuration file; an unreadable file or bad JSON is a problem too.
 * With `bind` (`--bind`, checked by the caller, which names it: see `bindOverrideError`), every
 * channel's `webhook.bind` is that, before validation, so that two channels on one path there
 * are refused as in the file.
 * A relative `state_dir` is made absolute against the file's folder, not the working
 * directory: started from elsewhere, the service must still find the work it accepted (and a
 * state left where an earlier release looked, against `cwd`, is not silently left behind:
 * see {@link movedStateDirProblem}).
 */
export async function readConfigFile(file: string, bind?: string, cwd = process.cwd()): Promise<ConfigResult> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const missing = error instanceof Error && "code" in error && error.code === "ENOENT";
    return {
      ok: false,
      problems: [
        {
          path: "",
          message: missing ? `${file} does not exist` : `${file} cannot be read: ${errorMessage(error)}`,
          fix: missing
            ? "create it (see config.json in the repository) or pass --config <file>"
            : "check the path and its permissions",
        },
      ],
    };
  }
  const json = parseConfigJson(text, file, "correct the JSON syntax");
  if (!json.ok) return { ok: false, problems: [json.problem] };
  const { document } = json;
  const result = validateConfig(bind === undefined ? document : withBind(document, bind));
  if (!result.ok || result.config.state_dir === undefined || isAbsolute(result.config.state_dir)) return result;
  const moved = movedStateDirProblem(result.config.state_dir, file, cwd);
  if (moved !== undefined) return { ok: false, problems: [moved] };
  return {
    ...result,
    config: { ...result.config, state_dir: resolve(dirname(resolve(file)), result.config.state_dir) },
  };
}

/** `document` with every channel's `webhook.bind` set to `bind` (what is not a channel list is left to validation). */
function withBind(document: unknown, bind: string): unknown {
  if (!isRecord(document) || !Array.isArray(document.channels)) return document;
  const channels: unknown[] = document.channels.map((channel: unknown) => {
    if (!isRecord(channel)) return channel;
    const webhook = isRecord(channel.webhook) ? channel.webhook : {};
    return { ...channel, webhook: { ...webhook, bind } };
  });
  return { ...document, channels };
}
