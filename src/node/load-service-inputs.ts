import { errorMessage } from "../core/channel-error.js";
import { formatProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { envReferences } from "../core/config/preflight.js";
import { channelName } from "../core/config/validate-config.js";
import type { LogFields } from "../core/log/logger.js";
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
    }
  | { readonly ok: false; readonly errors: readonly InputError[] };

/**
 * Reads the configuration file and every secret it names, as a start does and as a reload does
 * again: the file is validated, each `*_env` variable is resolved (its `<NAME>_FILE` read now,
 * so that an unreadable file stops the start, not a later request), and every channel must
 * have a non-empty inbound secret. Errors name variables and paths, never values.
 */
export async function loadServiceInputs(configPath: string, processEnv: ProcessEnvRecord): Promise<ServiceInputs> {
  const result = await readConfigFile(configPath);
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
    const file = secretFileOf(processEnv, variable);
    const what =
      file !== undefined
        ? `the file ${file} named by ${variable}_FILE is empty`
        : `environment variable ${variable} is ${value === undefined ? "not set" : "empty"}`;
    errors.push({
      msg: `${what}: it must hold the inbound secret of channel "${channelName(channel)}". Generate one with: export ${variable}="$(npx webhook-channel secret)", or write it to a file and set ${variable}_FILE to its path`,
      fields: { variable },
    });
  }
  const adminVariable = config.admin?.token_env;
  if (adminVariable !== undefined && !unreadable.has(adminVariable) && (env(adminVariable) ?? "") === "") {
    errors.push({
      msg: `environment variable ${adminVariable} (admin.token_env) is not set or empty: it must hold the admin secret. Generate one with: export ${adminVariable}="$(npx webhook-channel secret)"`,
      fields: { variable: adminVariable },
    });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, config, secrets, env };
}
