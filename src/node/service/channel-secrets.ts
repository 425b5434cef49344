import type { Config } from "../../core/config/config-schema.js";
import { parseInboundSecrets } from "../../core/config/inbound-secrets.js";
import { channelName } from "../../core/config/validate-config.js";

/**
 * The inbound secrets of every channel, by channel name, split once here (one, or two while
 * rotating) so that a request pays one map lookup. Throws the `config_invalid` ChannelError
 * of the first unusable value, naming its variable, never the value.
 */
export function channelSecrets(config: Config, raw: ReadonlyMap<string, string>): Map<string, readonly string[]> {
  const secrets = new Map<string, readonly string[]>();
  for (const channel of config.channels) {
    const name = channelName(channel);
    const parsed = parseInboundSecrets(raw.get(name) ?? "", channel.token_env);
    if (parsed instanceof Error) throw parsed;
    secrets.set(name, parsed);
  }
  return secrets;
}
