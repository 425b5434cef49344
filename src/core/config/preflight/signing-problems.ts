import { errorMessage } from "../../channel-error.js";
import { createReplySigner } from "../../outbound/reply-signer.js";
import type { ConfigProblem } from "../config-problem.js";
import type { Config } from "../config-schema.js";
import { type EnvLookup, fixForUnset } from "./preflight.js";

/** A place in the configuration that names signing variables, by JSON path. */
interface SigningPlace {
  readonly path: string;
  readonly signing_secret_env?: string | undefined;
  readonly signing_key_env?: string | undefined;
}

/**
 * Signing values that are set but unusable: a `whsec_` secret that is not base64, a `whsk_`
 * key of the wrong form or whose two halves disagree, for replies (`webhook`) and operator events
 * alike. Imported as the service imports them at start, so `config check --preflight` refuses
 * what the start would. Variables that are unset or unreadable are `preflight`'s to report;
 * messages never quote a value.
 */
export async function signingProblems(config: Config, env: EnvLookup): Promise<ConfigProblem[]> {
  const places: SigningPlace[] = config.channels.flatMap((channel, index) => [
    { ...channel.webhook, path: `channels[${index}].webhook` },
    ...(channel.operator_events === undefined
      ? []
      : [{ ...channel.operator_events, path: `channels[${index}].operator_events` }]),
  ]);
  if (config.operator_events !== undefined) places.push({ ...config.operator_events, path: "operator_events" });
  const problems: ConfigProblem[] = [];
  for (const place of places) {
    for (const key of ["signing_secret_env", "signing_key_env"] as const) {
      const variable = place[key];
      const value = variable === undefined ? undefined : readQuietly(env, variable);
      if (variable === undefined || value === undefined || value.trim() === "") continue;
      const values = key === "signing_secret_env" ? { secrets: { value, variable } } : { keys: { value, variable } };
      try {
        await createReplySigner(values);
      } catch (error) {
        const path = `${place.path}.${key}`;
        problems.push({ path, message: errorMessage(error), fix: fixForUnset(path, variable) });
      }
    }
  }
  return problems;
}

function readQuietly(env: EnvLookup, variable: string): string | undefined {
  try {
    return env(variable);
  } catch {
    return undefined;
  }
}
