import { parseBind } from "../core/config/bind-address.js";
import { BIND_VARIABLE } from "./parse-service-args.js";
import type { ProcessEnvRecord } from "./secret-env.js";

/** Where every channel listens instead of its `webhook.bind`, and who said so. */
export interface BindOverride {
  readonly value: string;
  /** `--bind` or the variable's name: what a message about the value names. */
  readonly source: string;
}

/** `--bind` when given, else a non-empty `WEBHOOK_CHANNEL_BIND`, else none (each channel's own bind). */
export function bindOverrideOf(flag: string | undefined, env: ProcessEnvRecord): BindOverride | undefined {
  if (flag !== undefined) return { value: flag, source: "--bind" };
  const variable = env[BIND_VARIABLE];
  return variable === undefined || variable === "" ? undefined : { value: variable, source: BIND_VARIABLE };
}

/**
 * Why the override cannot be used, naming where it came from, or undefined when it can. Checked
 * before the file is read: validated as the channels' binds, a bad value would be blamed on
 * the file's `channels[0].webhook.bind`, which the operator may not even have written.
 */
export function bindOverrideError(override: BindOverride): string | undefined {
  if (parseBind(override.value) !== undefined) return undefined;
  const { source, value } = override;
  const unset = source === BIND_VARIABLE ? ", or unset it to keep the file's binds" : "";
  return `invalid ${source}: ${JSON.stringify(value)} must be "host:port" with a port from 0 to 65535, e.g. "127.0.0.1:8090" or "[::1]:8090". Fix: correct ${source}, which every channel listens on instead of its webhook.bind${unset}`;
}
