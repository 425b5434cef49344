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
        fix: `export ${variable}=<value> (for a new inbound secret: export ${variable}="$(webhook-channel secret)")`,
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
