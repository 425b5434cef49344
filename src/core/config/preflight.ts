import { type ConfigProblem, formatJsonPath } from "./config-problem.js";
import type { Config } from "./config-schema.js";

/** Environment lookup, injected so the core never reads the process environment itself. */
export type EnvLookup = (name: string) => string | undefined;

/** Every `*_env` key of the configuration, at any depth, with its JSON path. */
export function envReferences(config: Config): { path: string; variable: string }[] {
  const found: { path: string; variable: string }[] = [];
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, [...path, index]);
    } else if (value !== null && typeof value === "object") {
      for (const [key, child] of Object.entries(value)) {
        if (key.endsWith("_env") && typeof child === "string")
          found.push({ path: formatJsonPath([...path, key]), variable: child });
        else walk(child, [...path, key]);
      }
    }
  };
  walk(config, []);
  return found;
}

/**
 * Confirms that every variable the configuration names resolves to a non-empty value.
 * Problems name the variable, never its value.
 */
export function preflight(config: Config, env: EnvLookup): ConfigProblem[] {
  return envReferences(config)
    .filter(({ variable }) => (env(variable) ?? "") === "")
    .map(({ path, variable }) => ({
      path,
      message: `environment variable ${variable} is ${env(variable) === undefined ? "not set" : "empty"}`,
      fix: `export ${variable}=<value> (for a new inbound secret: export ${variable}="$(webhook-channel secret)")`,
    }));
}
