import { formatJsonPath } from "../config-problem.js";
import type { Config } from "../config-schema.js";

/** The keys whose value is a URL the service connects to: replies, brains, operator events. */
const URL_KEYS: ReadonlySet<string> = new Set(["outbound_url", "url", "base_url"]);

/** A URL the service calls, and the JSON path it is written at. */
export interface UrlReference {
  readonly path: string;
  readonly url: string;
}

/**
 * Every http(s) URL the configuration names for the service to call (each channel's
 * `outbound_url`, the brains' `url` and `base_url`, `operator_events.url`), for a preflight to
 * try: a wrong host or port shows before the first reply waits on it.
 */
export function urlReferences(config: Config): UrlReference[] {
  const found: UrlReference[] = [];
  const walk = (value: unknown, path: PropertyKey[]): void => {
    if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) walk(item, [...path, index]);
    } else if (value !== null && typeof value === "object") {
      for (const [key, child] of Object.entries(value)) {
        if (URL_KEYS.has(key) && typeof child === "string" && /^https?:\/\//i.test(child)) {
          found.push({ path: formatJsonPath([...path, key]), url: child });
        } else walk(child, [...path, key]);
      }
    }
  };
  walk(config, []);
  return found;
}
