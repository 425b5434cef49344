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

// Visible ASCII and Latin-1 with inner spaces and tabs: what an HTTP field value may hold.
const HEADER_SAFE = /^[\x21-\x7e\x80-\xff](?:[\t\x20-\x7e\x80-\xff]*[\x21-\x7e\x80-\xff])?$/;

/**
 * Why a secret's value cannot be used as is, or undefined. Secrets travel in HTTP headers
 * (Bearer tokens, API keys) or are compared with one, so a trailing newline from a file or a
 * copy-paste would fail every request; it is refused up front instead. Never names the value.
 */
export function envValueProblem(value: string): string | undefined {
  if (HEADER_SAFE.test(value)) return undefined;
  return /^\s|\s$/.test(value)
    ? "starts or ends with whitespace (a trailing newline?)"
    : "contains characters an HTTP header cannot carry (control characters, or beyond Latin-1)";
}

/**
 * Confirms that every variable the configuration names resolves to a non-empty value that
 * can travel in an HTTP header. Problems name the variable, never its value.
 */
export function preflight(config: Config, env: EnvLookup): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const { path, variable } of envReferences(config)) {
    const value = env(variable);
    if (value === undefined || value === "") {
      problems.push({
        path,
        message: `environment variable ${variable} is ${value === undefined ? "not set" : "empty"}`,
        fix: fixForUnset(path, variable),
      });
      continue;
    }
    const problem = envValueProblem(value);
    if (problem !== undefined) {
      problems.push({
        path,
        message: `environment variable ${variable} ${problem}`,
        fix: `export ${variable} again without surrounding whitespace or line breaks`,
      });
    }
  }
  return problems;
}

/**
 * How to set a variable, by what its key holds: only a channel's inbound secret is ours to
 * make (`webhook-channel secret`); an API key or a receiver's token comes from elsewhere, and a
 * signing secret has the `whsec_` form. `npx` because in a clone the bin is not on PATH.
 */
function fixForUnset(path: string, variable: string): string {
  if (/^channels\[\d+\]\.token_env$/.test(path)) {
    return `export ${variable}="$(npx webhook-channel secret)" (a new inbound secret; give the same value to the clients)`;
  }
  const key = path.slice(path.lastIndexOf(".") + 1);
  switch (key) {
    case "api_key_env":
      return `export ${variable}=<the API key from your model provider> (local servers that need no key: remove "api_key_env")`;
    case "signing_secret_env":
      return `export ${variable}="whsec_$(openssl rand -base64 32)" and give the receiver the same value`;
    case "outbound_token_env":
      return `export ${variable}=<the token your receiver expects>`;
    case "token_env":
      return `export ${variable}=<the token your bot expects>`;
    default:
      return `export ${variable}=<value>`;
  }
}
