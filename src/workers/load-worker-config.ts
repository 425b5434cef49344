import bundledConfig from "../../config.json";
import { isChannelError } from "../core/channel-error.js";
import { parseConfigJson } from "../core/config/config-json/parse-config-json.js";
import type { ConfigProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { parseInboundSecrets } from "../core/config/inbound-secrets.js";
import { envReferences, preflight, valueForUnset } from "../core/config/preflight/preflight.js";
import { isNodeTlsVariable } from "../core/config/preflight/workers-tls.js";
import { type ConfigResult, channelName, validateConfig } from "../core/config/validate-config.js";
import { tlsBindingProblems } from "./tls-binding-problems.js";
import { envString, type WorkerEnv } from "./worker-env.js";

/** A configuration as the Worker loaded it, with where it came from (for the logs). */
export type WorkerConfig =
  | {
      readonly ok: true;
      readonly source: string;
      readonly config: Config;
      /** Inbound secrets per channel name: one, or two while rotating. */
      readonly secrets: ReadonlyMap<string, readonly string[]>;
      /** What the configuration allows but should not be (not a `bind`'s: a Worker binds nothing). */
      readonly warnings: readonly ConfigProblem[];
    }
  | { readonly ok: false; readonly source: string; readonly problems: readonly ConfigProblem[] };

/** Name of the variable that replaces the bundled config.json when present. */
export const CONFIG_JSON = "CONFIG_JSON";

// Validated once per isolate: the bundled document never changes while it lives.
let bundledResult: ConfigResult | undefined;

/**
 * Loads the Worker's configuration: `CONFIG_JSON` when the environment has it (a JSON string
 * or, from a `[vars]` table, an object), else the repository's config.json bundled at build
 * time. Then checks what only the Worker can: that every `*_env` variable is set (but those of
 * `webhook.tls`, which only Node reads), that no two channels share a path (there is one
 * origin; `bind` does not apply here), and that a channel's `webhook.tls` has its mTLS binding.
 */
export function loadWorkerConfig(env: WorkerEnv): WorkerConfig {
  const override = env[CONFIG_JSON];
  let source: string;
  let result: ConfigResult;
  if (override === undefined || override === null || override === "") {
    source = "config.json (bundled)";
    bundledResult ??= validateConfig(bundledConfig);
    result = bundledResult;
  } else {
    source = CONFIG_JSON;
    const parsed = parseOverride(override);
    result = parsed.ok ? validateConfig(parsed.document) : { ok: false, problems: [parsed.problem] };
  }
  if (!result.ok) return { ok: false, source, problems: result.problems };

  const { config } = result;
  const problems = [...secretProblems(config, env), ...pathProblems(config), ...tlsBindingProblems(config, env)];
  if (problems.length > 0) return { ok: false, source, problems };
  const secrets = new Map<string, readonly string[]>();
  for (const [index, channel] of config.channels.entries()) {
    const parsed = parseInboundSecrets(envString(env, channel.token_env) ?? "", channel.token_env);
    if (isChannelError(parsed)) {
      problems.push({
        path: `channels[${index}].token_env`,
        message: parsed.message,
        fix: `set ${channel.token_env} to one secret, or to the new and the old separated by one space while rotating (deployed: wrangler secret put ${channel.token_env}; wrangler dev: .dev.vars)`,
      });
    } else secrets.set(channelName(channel), parsed);
  }
  problems.push(...adminSecretProblems(config, env));
  if (problems.length > 0) return { ok: false, source, problems };
  // Node's alone: a Worker binds no address, and its queue, not buffer_capacity, holds what waits.
  const warnings = result.warnings.filter(
    (warning) => !warning.path.endsWith(".webhook.bind") && warning.path !== "timeline.max_messages",
  );
  return { ok: true, source, config, secrets, warnings };
}

function parseOverride(value: unknown): { ok: true; document: unknown } | { ok: false; problem: ConfigProblem } {
  if (typeof value !== "string") return { ok: true, document: value };
  return parseConfigJson(value, CONFIG_JSON, `correct it, or remove ${CONFIG_JSON} to use the bundled config.json`);
}

/** The core's preflight, with the fix that applies on Workers. Never includes a value. */
function secretProblems(config: Config, env: WorkerEnv): ConfigProblem[] {
  return envReferences(config)
    .filter(({ path, variable }) => !isNodeTlsVariable(path) && (envString(env, variable) ?? "") === "")
    .map(({ path, variable }) => ({
      path,
      message: `the Worker's environment has no ${variable} (or it is empty)`,
      fix: `deployed: wrangler secret put ${variable}; wrangler dev: add ${variable}=<value> to .dev.vars; the value: ${valueForUnset(path)}`,
    }));
}

/**
 * The core's checks of the admin secret once it is known to be set: a value that cannot travel
 * in a header, or a channel's secret (whoever holds that would read every channel's dead letters).
 */
function adminSecretProblems(config: Config, env: WorkerEnv): ConfigProblem[] {
  const variable = config.admin?.token_env;
  if (variable === undefined) return [];
  return preflight(config, (name) => envString(env, name))
    .filter((problem) => problem.path === "admin.token_env")
    .map((problem) => ({
      ...problem,
      fix: `deployed: wrangler secret put ${variable}; wrangler dev: ${variable}=<value> in .dev.vars; a new secret (npx webhook-channel secret makes one), known to operators only and no channel's`,
    }));
}

function pathProblems(config: Config): ConfigProblem[] {
  const seen = new Map<string, number>();
  const problems: ConfigProblem[] = [];
  config.channels.forEach((channel, index) => {
    const first = seen.get(channel.webhook.path);
    if (first === undefined) seen.set(channel.webhook.path, index);
    else {
      problems.push({
        path: `channels[${index}].webhook.path`,
        message: `path ${channel.webhook.path} is already used by channels[${first}]; on Workers every channel shares one origin and bind does not apply`,
        fix: "give each channel its own path",
      });
    }
  });
  return problems;
}
