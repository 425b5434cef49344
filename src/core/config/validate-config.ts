import { isRecord } from "../is-record.js";
import { isLoopbackHost, parseBind } from "./bind-address.js";
import { bindProblems } from "./bind-problems.js";
import { BUILT_IN_BRAINS, brainNameProblems } from "./brain-name-problems.js";
import { type ConfigProblem, formatJsonPath } from "./config-problem.js";
import { type ChannelConfig, type Config, configSchema } from "./config-schema.js";
import { fallbackProblems } from "./fallback-problems.js";
import { issueToProblems } from "./issue-problems.js";
import { FIXED_REPLY_KEYS, MESSAGE_FIELDS, resolveMapping } from "./message-fields.js";
import { joinMisspelledKeys } from "./misspelled-keys.js";
import { nestingProblem } from "./nesting-depth.js";
import { timelineWarnings } from "./timeline-warnings.js";
import { tlsProblems } from "./tls-problems.js";

/** Result of validating a configuration document. */
export type ConfigResult =
  | { readonly ok: true; readonly config: Config; readonly warnings: readonly ConfigProblem[] }
  | { readonly ok: false; readonly problems: readonly ConfigProblem[] };

export { BUILT_IN_BRAINS } from "./brain-name-problems.js";

const SECRET_KEYS = new Set(["token", "secret", "password", "api_key", "apikey"]);

/** The name routes use for a channel: its `name`, else its type. */
export function channelName(channel: ChannelConfig): string {
  return channel.name ?? channel.type;
}

/**
 * Validates a parsed configuration document: schema, defaults, and every cross-field rule.
 * Problems carry the JSON path and the fix; nothing here reads the environment.
 */
export function validateConfig(document: unknown): ConfigResult {
  // First and alone: every other check walks the document, and could not walk this one.
  const tooDeep = nestingProblem(document);
  if (tooDeep !== undefined) return { ok: false, problems: [tooDeep] };
  const early = [...findSecretKeys(document, []), ...findModeKeys(document), ...brainNameProblems(document)];
  // reportInput puts the offending value on each issue, so a message can say what was found.
  const parsed = configSchema.safeParse(document, { reportInput: true });
  if (!parsed.success) {
    const schemaProblems = joinMisspelledKeys(parsed.error.issues.flatMap(issueToProblems));
    // The early checks say more than "unknown key" about the same keys.
    const earlyPaths = new Set(early.map((problem) => problem.path));
    return { ok: false, problems: [...early, ...schemaProblems.filter((problem) => !earlyPaths.has(problem.path))] };
  }
  const problems = [...early, ...crossCheck(parsed.data)];
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, config: parsed.data, warnings: [...warningsFor(parsed.data), ...timelineWarnings(parsed.data)] };
}

function findSecretKeys(value: unknown, path: PropertyKey[]): ConfigProblem[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => findSecretKeys(item, [...path, index]));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([key, child]) => {
    const here = [...path, key];
    if (SECRET_KEYS.has(key.toLowerCase())) {
      return [
        {
          path: formatJsonPath(here),
          message: `a key named "${key}" would put a secret in the file; secrets belong in the environment`,
          fix: 'remove it, export the secret as an environment variable and name that variable in a "*_env" key (e.g. "token_env")',
        },
      ];
    }
    return findSecretKeys(child, here);
  });
}

function findModeKeys(document: unknown): ConfigProblem[] {
  if (!isRecord(document) || !Array.isArray(document.channels)) return [];
  return document.channels.flatMap((channel: unknown, index) => {
    const places: PropertyKey[][] = [];
    if (isRecord(channel)) {
      if ("mode" in channel) places.push(["channels", index, "mode"]);
      if (isRecord(channel.webhook) && "mode" in channel.webhook) places.push(["channels", index, "webhook", "mode"]);
    }
    return places.map((place) => ({
      path: formatJsonPath(place),
      message: "The webhook channel takes no `mode` field",
      fix: 'remove "mode"',
    }));
  });
}

function crossCheck(config: Config): ConfigProblem[] {
  const problems: ConfigProblem[] = [...stateProblems(config)];
  const channelIndex = new Map<string, number>();
  config.channels.forEach((channel, index) => {
    const name = channelName(channel);
    const first = channelIndex.get(name);
    if (first !== undefined) {
      problems.push({
        path: `channels[${index}].name`,
        message: `channel name "${name}" is already used by channels[${first}]`,
        fix: 'give each channel a unique "name"',
      });
    } else channelIndex.set(name, index);
    problems.push(...mappingProblems(channel, index));
  });
  problems.push(...bindProblems(config.channels));

  const brains = new Set([...BUILT_IN_BRAINS, ...Object.keys(config.brains ?? {})]);
  const routed = new Map<string, number>();
  config.routes.forEach((route, index) => {
    if (!channelIndex.has(route.channel)) {
      problems.push({
        path: `routes[${index}].channel`,
        message: `no channel is named "${route.channel}"`,
        fix: `use one of: ${[...channelIndex.keys()].map((name) => JSON.stringify(name)).join(", ")}`,
      });
    }
    if (!brains.has(route.brain)) {
      problems.push({
        path: `routes[${index}].brain`,
        message: `no brain is named "${route.brain}"`,
        fix: `use one of ${[...brains].map((name) => JSON.stringify(name)).join(", ")}, or define it under "brains"`,
      });
    }
    const earlier = routed.get(route.channel);
    if (earlier !== undefined) {
      problems.push({
        path: `routes[${index}]`,
        message: `channel "${route.channel}" already has a route at routes[${earlier}]`,
        fix: "keep exactly one route per channel",
      });
    } else routed.set(route.channel, index);
  });
  for (const [name, index] of channelIndex) {
    if (!routed.has(name)) {
      problems.push({
        path: "routes",
        message: `channel "${name}" (channels[${index}]) has no route`,
        fix: `add { "channel": "${name}", "brain": "echo" } (or another brain) to "routes"`,
      });
    }
  }
  problems.push(...fallbackProblems(config.brains ?? {}, brains), ...tlsProblems(config));
  return problems;
}

/** `postgres_url_env` replaces `state_dir`, and the delivery thread has no Postgres connection. */
function stateProblems(config: Config): ConfigProblem[] {
  if (config.postgres_url_env === undefined) return [];
  const problems: ConfigProblem[] = [];
  if (config.state_dir !== undefined) {
    problems.push({
      path: "postgres_url_env",
      message: "cannot be combined with state_dir: the state lives in one place",
      fix: 'keep "state_dir" for one process, or "postgres_url_env" for several replicas, and remove the other',
    });
  }
  if (config.delivery_thread) {
    problems.push({
      path: "delivery_thread",
      message: "is not supported with postgres_url_env",
      fix: 'remove "delivery_thread": run more replicas to use more cores',
    });
  }
  return problems;
}

function mappingProblems(channel: ChannelConfig, index: number): ConfigProblem[] {
  const mapping = channel.webhook.mapping;
  if (mapping === undefined) return [];
  const resolved = resolveMapping(mapping);
  const problems: ConfigProblem[] = [];
  const owner = new Map<string, string>();
  for (const field of MESSAGE_FIELDS) {
    const key = resolved[field];
    const other = owner.get(key);
    if (other !== undefined) {
      problems.push({
        path: `channels[${index}].webhook.mapping.${mapping[field] === undefined ? other : field}`,
        message: `fields "${other}" and "${field}" would both read the JSON key "${key}"`,
        fix: "map each field to a different key",
      });
    } else owner.set(key, field);
    if (key === "__proto__") {
      // Assigned to an object, the key sets its prototype instead: the reply would go without it.
      problems.push({
        path: `channels[${index}].webhook.mapping.${field}`,
        message: '"__proto__" is the name JavaScript gives an object\'s prototype, not a key a reply can carry',
        fix: "pick another key",
      });
    }
    if (mapping[field] !== undefined && (FIXED_REPLY_KEYS as readonly string[]).includes(key)) {
      problems.push({
        path: `channels[${index}].webhook.mapping.${field}`,
        message: `"${key}" is a fixed key of the outbound reply and cannot be reused`,
        fix: `pick a key other than ${FIXED_REPLY_KEYS.join(", ")}`,
      });
    }
  }
  return problems;
}

function warningsFor(config: Config): ConfigProblem[] {
  return config.channels.flatMap((channel, index) => {
    const warnings: ConfigProblem[] = [];
    const parsed = parseBind(channel.webhook.bind);
    if (parsed !== undefined && !isLoopbackHost(parsed.host)) {
      warnings.push({
        path: `channels[${index}].webhook.bind`,
        message: `${channel.webhook.bind} is not loopback: the Bearer secret would cross the network in cleartext`,
        fix: "bind to 127.0.0.1 and put a TLS-terminating proxy in front",
      });
    }
    const { max_attempts: attempts, circuit_failures: failures } = channel.webhook.delivery;
    // The circuit opens after `failures` unanswered POSTs in a row: a message that spends its
    // attempts first is dead-lettered for the receiver's outage.
    if (failures > 0 && attempts < failures) {
      warnings.push({
        path: `channels[${index}].webhook.delivery.max_attempts`,
        message: `${attempts} is below circuit_failures (${failures}): a receiver outage can dead-letter a message before the receiver circuit opens and holds the replies`,
        fix: `raise max_attempts to ${failures} or more, or lower circuit_failures`,
      });
    }
    return warnings;
  });
}
