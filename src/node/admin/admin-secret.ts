import { ChannelError } from "../../core/channel-error.js";
import type { Config } from "../../core/config/config-schema.js";
import { envValueProblem } from "../../core/config/preflight/preflight.js";
import { channelName } from "../../core/config/validate-config.js";

/**
 * The admin secret `admin.token_env` names (`NAME`, else the file `NAME_FILE` names, through
 * `env`), checked the same way at a start and at a reload: it must be set, not empty, and
 * differ from every channel's inbound secret (both while one rotates), since whoever holds a
 * channel secret would otherwise read, replay and delete every channel's dead letters.
 * Undefined without `admin`. Throws a `config_invalid` ChannelError naming the variables,
 * never a value.
 */
export function readAdminSecret(
  config: Config,
  env: (name: string) => string | undefined,
  channelSecrets: ReadonlyMap<string, readonly string[]>,
): string | undefined {
  const variable = config.admin?.token_env;
  if (variable === undefined) return undefined;
  const secret = env(variable);
  if (secret === undefined || secret === "") {
    throw new ChannelError(
      "config_invalid",
      `environment variable ${variable} (admin.token_env) is not set or empty: it must hold the admin secret`,
      { variable },
    );
  }
  // Compared with a header, which runtimes read differently beyond ASCII: refused as config check refuses it.
  const problem = envValueProblem(secret);
  if (problem !== undefined) {
    throw new ChannelError("config_invalid", `environment variable ${variable} (admin.token_env) ${problem}`, {
      variable,
    });
  }
  for (const channel of config.channels) {
    if (channelSecrets.get(channelName(channel))?.includes(secret) !== true) continue;
    throw new ChannelError(
      "config_invalid",
      `environment variable ${variable} (admin.token_env) holds the same secret as ${channel.token_env}, a channel's inbound secret: give the admin API a secret of its own`,
      { variable },
    );
  }
  return secret;
}
