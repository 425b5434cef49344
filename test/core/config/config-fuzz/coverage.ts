import type { ConfigResult } from "../../../../src/core/config/validate-config.js";
import { parsePath } from "./problem-path.js";

/** The top-level keys of the schema: each must be the root of some problem. */
export const TOP_LEVEL_KEYS = [
  "$schema",
  "channels",
  "routes",
  "brains",
  "state_dir",
  "postgres_url_env",
  "log_level",
  "shutdown_timeout_ms",
  "delivery_thread",
  "observability",
  "operator_events",
  "timeline",
  "conversation_memory",
  "admin",
];

/**
 * Words of every kind of problem and warning `validateConfig` gives (the schema's, the early
 * checks', the cross-field rules'): each must come up, or the seed is too weak to keep.
 */
export const EXPECTED_KINDS = [
  "is required",
  "unknown key",
  "likely a typo of",
  "would put a secret in the file",
  "looks like a secret itself",
  "is nested deeper than",
  "expected a JSON object at the top level",
  "found the number",
  "found the string",
  "must be at most",
  "must be at least",
  "is already used by channels",
  "are already used by channels",
  "cannot listen beside",
  "no channel is named",
  "no brain is named",
  "already has a route",
  "has no route",
  "names itself as its fallback",
  "form a cycle",
  "is already listed at fallback",
  "cannot be combined with state_dir",
  "is not supported with postgres_url_env",
  "is required with the other half",
  "applies to an https: outbound_url",
  "is empty",
  "would both read the JSON key",
  "is a fixed key of the outbound reply",
  "takes no `mode` field",
  "is the built-in brain's name",
  "cannot name a brain",
  "a brain's name is empty",
  "names no signing variable",
  "is not loopback",
  "is below circuit_failures",
  "leaves less than an hour",
  "is below what the channels' buffers hold",
];

/** What the fuzz reached: results of each kind, the problems' path roots and the kinds of problem. */
export class Coverage {
  ok = 0;
  notOk = 0;
  withWarnings = 0;
  readonly roots = new Set<string>();
  readonly shapes = new Set<string>();
  private readonly texts = new Set<string>();

  /** Counts one result. */
  add(result: ConfigResult): void {
    const problems = result.ok ? result.warnings : result.problems;
    if (result.ok) this.ok += 1;
    else this.notOk += 1;
    if (result.ok && result.warnings.length > 0) this.withWarnings += 1;
    for (const problem of problems) {
      const [first] = parsePath(problem.path) ?? [];
      this.roots.add(first === undefined ? "(file)" : first.kind === "key" ? first.key : `[${first.index}]`);
      this.shapes.add(problem.path.replace(/\[\d+\]/g, "[i]"));
      this.texts.add(problem.message);
    }
  }

  /** The kinds of {@link EXPECTED_KINDS} no problem or warning showed. */
  missingKinds(): string[] {
    const texts = [...this.texts];
    return EXPECTED_KINDS.filter((kind) => !texts.some((text) => text.includes(kind)));
  }

  /** A line for the failure messages. */
  summary(): string {
    return `${this.ok} ok (${this.withWarnings} with warnings), ${this.notOk} not ok, ${this.roots.size} path roots, ${this.shapes.size} path shapes`;
  }
}
