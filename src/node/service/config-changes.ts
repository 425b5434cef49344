import { formatJsonPath } from "../../core/config/config-problem.js";
import type { Config } from "../../core/config/config-schema.js";
import { channelName } from "../../core/config/validate-config.js";

/** What differs between the running configuration and a reloaded one, as JSON paths. */
export interface ConfigChanges {
  /** Keys a reload applies while the service runs. */
  readonly live: readonly string[];
  /** Keys that take effect only at a restart; any of them refuses the whole reload. */
  readonly restart: readonly string[];
}

/**
 * The keys a running service can swap: the outbound side of a channel (rebuilt routes, `tls`
 * included: a renewed certificate's connections are new ones), its
 * inbound secret's variable (read per request), its connection cap (set on the listener),
 * the routes and brains (rebuilt), the admin secret's variable (read per request; `admin`
 * itself, added or removed, and `max_dead_letters` need a restart), the shutdown timeout
 * (read at the signal), and the operator events' destinations (their routes are rebuilt). Patterns are
 * JSON paths with `*` for a channel's index; a key below a pattern matches it. Everything
 * else, keys added later included, needs a restart until it is listed here: `bind` and `path`
 * own a socket and a route, `mapping` and `buffer_capacity` are built into the accept flow and
 * the queue, `state_dir` and `delivery_thread` into the process, `log_level` into the loggers,
 * `conversation_memory` into the conversation stores (the delivery thread's too) and the prune.
 */
const LIVE: readonly (readonly string[])[] = [
  ["$schema"],
  ["channels", "*", "token_env"],
  ["channels", "*", "webhook", "outbound_url"],
  ["channels", "*", "webhook", "delivery"],
  ["channels", "*", "webhook", "signing_secret_env"],
  ["channels", "*", "webhook", "signing_key_env"],
  ["channels", "*", "webhook", "tls"],
  ["channels", "*", "webhook", "outbound_token_env"],
  ["channels", "*", "webhook", "max_connections"],
  ["routes"],
  ["brains"],
  ["shutdown_timeout_ms"],
  ["admin", "token_env"],
  ["operator_events"],
  ["channels", "*", "operator_events"],
];

/**
 * Compares two valid configurations. Channels are matched by name, so that reordering them
 * changes nothing; a channel added or removed needs a restart (it owns a queue and a route).
 * Objects are compared key by key down to their leaves; arrays other than `channels` as a whole.
 */
export function compareConfigs(current: Config, next: Config): ConfigChanges {
  const live: string[] = [];
  const restart: string[] = [];
  const record = (segments: readonly PropertyKey[]): void => {
    (isLive(segments) ? live : restart).push(formatJsonPath(segments));
  };
  const { channels: currentChannels, ...currentRest } = current;
  const { channels: nextChannels, ...nextRest } = next;
  diff(currentRest, nextRest, [], record);

  const before = new Map(currentChannels.map((channel) => [channelName(channel), channel]));
  const after = new Set(nextChannels.map(channelName));
  for (const [index, channel] of nextChannels.entries()) {
    const previous = before.get(channelName(channel));
    if (previous === undefined)
      restart.push(`${formatJsonPath(["channels", index])} (channel "${channelName(channel)}" added)`);
    else diff(previous, channel, ["channels", index], record);
  }
  for (const name of before.keys()) {
    if (!after.has(name)) restart.push(`channels (channel "${name}" removed)`);
  }
  return { live, restart };
}

function isLive(segments: readonly PropertyKey[]): boolean {
  return LIVE.some(
    (pattern) =>
      pattern.length <= segments.length &&
      pattern.every((part, index) => {
        const segment = segments[index];
        return part === "*" ? typeof segment === "number" : part === segment;
      }),
  );
}

/** Calls `record` with the path of every leaf (or array) that differs between `a` and `b`. */
function diff(
  a: unknown,
  b: unknown,
  path: readonly PropertyKey[],
  record: (path: readonly PropertyKey[]) => void,
): void {
  if (isPlainObject(a) && isPlainObject(b)) {
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) diff(a[key], b[key], [...path, key], record);
  } else if (JSON.stringify(a) !== JSON.stringify(b)) record(path);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
