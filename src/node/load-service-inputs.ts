import { errorMessage } from "../core/channel-error.js";
import { type ConfigProblem, formatProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { envReferences } from "../core/config/preflight/preflight.js";
import { channelName } from "../core/config/validate-config.js";
import type { LogFields } from "../core/log/logger.js";
import { type BindOverride, bindOverrideError } from "./bind-override.js";
import { clientTlsProblems, workersOnlyTls } from "./client-tls-problems.js";
import { readConfigFile } from "./read-config-file.js";
import { createSecretEnv, type ProcessEnvRecord, type SecretLookup, secretFileOf } from "./secret-env.js";

/** One reason the inputs cannot be used, as a log line. */
export interface InputError {
  readonly msg: string;
  readonly fields?: LogFields;
}

/** What the service starts (or reloads) from, or why it cannot. */
export type ServiceInputs =
  | {
      readonly ok: true;
      readonly config: Config;
      /** Inbound secret per channel name, none empty. */
      readonly secrets: ReadonlyMap<string, string>;
      /** The lookup of every other `*_env` variable; every file it names has been read. */
      readonly env: SecretLookup;
      /** The configuration's warnings but the bind's (the listener warns about the bind it listens on). */
      readonly warnings: readonly ConfigProblem[];
    }
  | { readonly ok: false; readonly errors: readonly InputError[] };

/**
 * Reads the configuration file and every secret it names, as a start does and as a reload does
 * again: `bind` (`--bind` or its variable) is checked and named on its own, the file is validated, each `*_env` variable is resolved (its `<NAME>_FILE` read now,
 * so that an unreadable file stops the start, not a later request), and every channel must
 * have a non-empty inbound secret, and each channel's `webhook.tls` must be usable on Node (its
 * certificate and key PEM that match). Errors name variables and paths, never values.
 */
export async function loadServiceInputs(
  configPath: string,
  processEnv: ProcessEnvRecord,
  bind?: BindOverride,
): Promise<ServiceInputs> {
  const refused = bind === undefined ? undefined : bindOverrideError(bind);
  if (refused !== undefined) return { ok: false, errors: [{ msg: refused }] };
  const result = await readConfigFile(configPath, bind?.value);
  if (!result.ok) {
    return {
      ok: false,
      errors: result.problems.map((problem) => ({ msg: `invalid configuration: ${formatProblem(problem)}` })),
    };
  }
  const { config } = result;
  const env = createSecretEnv(processEnv);
  const errors: InputError[] = [];
  const unreadable = new Set<string>();
  for (const { variable } of envReferences(config)) {
    if (unreadable.has(variable)) continue;
    try {
      env(variable);
    } catch (error) {
      unreadable.add(variable);
      errors.push({ msg: errorMessage(error), fields: { variable } });
    }
  }
  const secrets = new Map<string, string>();
  for (const channel of config.channels) {
    const variable = channel.token_env;
    if (unreadable.has(variable)) continue;
    const value = env(variable);
    if (value !== undefined && value !== "") {
      secrets.set(channelName(channel), value);
      continue;
    }
    errors.push({
      msg: `${missing(processEnv, variable, value)}: it must hold the inbound secret of channel "${channelName(channel)}". ${generate(variable)}`,
      fields: { variable },
    });
  }
  // Checked here as well as by the service, so that the line names the file when NAME_FILE is empty.
  const adminVariable = config.admin?.token_env;
  if (adminVariable !== undefined && !unreadable.has(adminVariable)) {
    const value = env(adminVariable);
    if (value === undefined || value === "") {
      errors.push({
        msg: `${missing(processEnv, adminVariable, value)} (admin.token_env): it must hold the admin secret, not any channel's. ${generate(adminVariable)}`,
        fields: { variable: adminVariable },
      });
    }
  }
  // Only once every file could be read: an unreadable one is reported above, by name.
  if (errors.length === 0) {
    for (const problem of [...workersOnlyTls(config), ...clientTlsProblems(config, env)]) {
      errors.push({ msg: `invalid configuration: ${formatProblem(problem)}` });
    }
  }
  const warnings = result.warnings.filter((warning) => !warning.path.endsWith(".webhook.bind"));
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config, secrets, env, warnings };
}

/** Why a secret's variable gave nothing: unset, empty, or read from an empty file. */
function missing(processEnv: ProcessEnvRecord, variable: string, value: string | undefined): string {
  const file = secretFileOf(processEnv, variable);
  if (file !== undefined) return `the file ${file} named by ${variable}_FILE is empty`;
  return `environment variable ${variable} is ${value === undefined ? "not set" : "empty"}`;
}

function generate(variable: string): string {
  return `Generate one with: export ${variable}="$(npx webhook-channel secret)", or write it to a file and set ${variable}_FILE to its path`;
}
