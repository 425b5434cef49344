import type { Brain } from "../brain/brain.js";
import { ChannelError } from "../channel-error.js";
import type { Config } from "../config/config-schema.js";
import { type KeyMapping, resolveMapping } from "../config/message-fields.js";
import { envValueProblem } from "../config/preflight/preflight.js";
import { channelName } from "../config/validate-config.js";
import type { RetryPolicy } from "../lifecycle/retry-policy.js";
import { type ClientTls, readClientTls } from "../outbound/client-tls.js";
import { baseReplyHeaders } from "../outbound/deliver-reply.js";
import { createReplySigner, type ReplySigner, type SigningValue } from "../outbound/reply-signer.js";

/** Where and how one channel's messages are answered, worked out at start and again at each reload. */
export interface ChannelRoute {
  readonly channel: string;
  readonly brain: Brain;
  /** The brain's name in the configuration, as metrics label it. */
  readonly brainName: string;
  readonly keys: KeyMapping;
  readonly url: string;
  readonly timeoutMs: number;
  readonly policy: RetryPolicy;
  /** Headers every reply of the channel carries (content type, user agent, outbound token). */
  readonly headers: Readonly<Record<string, string>>;
  readonly signer: ReplySigner | undefined;
  /** The client certificate and CA of `webhook.tls`, for the Poster; undefined without `tls`. */
  readonly tls: ClientTls | undefined;
}

/**
 * The route of every configured channel, by channel name. Rejects with `config_invalid` when a
 * channel has no usable brain, or a variable that delivery needs is unset or unusable.
 */
export async function createChannelRoutes(
  config: Config,
  brains: ReadonlyMap<string, Brain>,
  env: (name: string) => string | undefined,
): Promise<Map<string, ChannelRoute>> {
  const routes = new Map<string, ChannelRoute>();
  for (const channel of config.channels) {
    const name = channelName(channel);
    const route = config.routes.find((candidate) => candidate.channel === name);
    const brain = route === undefined ? undefined : brains.get(route.brain);
    if (brain === undefined) throw new ChannelError("config_invalid", `channel "${name}" has no usable route`);
    const { webhook } = channel;
    const headers: Record<string, string> = { ...baseReplyHeaders() };
    if (webhook.outbound_token_env !== undefined) {
      headers.authorization = `Bearer ${requireHeaderSafeEnv(env, webhook.outbound_token_env)}`;
    }
    const signer =
      webhook.signing_secret_env === undefined && webhook.signing_key_env === undefined
        ? undefined
        : await createReplySigner({
            secrets: signingValue(env, webhook.signing_secret_env),
            keys: signingValue(env, webhook.signing_key_env),
          });
    routes.set(name, {
      channel: name,
      brain,
      brainName: route?.brain ?? "",
      keys: resolveMapping(webhook.mapping),
      url: webhook.outbound_url,
      timeoutMs: webhook.delivery.timeout_ms,
      policy: {
        initialDelayMs: webhook.delivery.initial_delay_ms,
        maxDelayMs: webhook.delivery.max_delay_ms,
        maxAttempts: webhook.delivery.max_attempts,
        maxAgeMs: webhook.delivery.max_age_ms,
      },
      headers,
      signer,
      tls: readClientTls(channel, env),
    });
  }
  return routes;
}

function signingValue(
  env: (name: string) => string | undefined,
  variable: string | undefined,
): SigningValue | undefined {
  return variable === undefined ? undefined : { value: requireEnv(env, variable), variable };
}

function requireEnv(env: (name: string) => string | undefined, name: string): string {
  const value = env(name);
  if (value === undefined || value === "") {
    throw new ChannelError("config_invalid", `environment variable ${name} is not set`, { variable: name });
  }
  return value;
}

/**
 * requireEnv for a value sent as a header. Checked here, once: a value the HTTP client
 * refuses would fail every delivery, and undici leaves the pool's connection slot stuck.
 */
function requireHeaderSafeEnv(env: (name: string) => string | undefined, name: string): string {
  const value = requireEnv(env, name);
  const problem = envValueProblem(value);
  if (problem !== undefined) {
    throw new ChannelError("config_invalid", `environment variable ${name} ${problem}`, { variable: name });
  }
  return value;
}
