/** One problem (or warning) found in a configuration, located by JSON path. */
export interface ConfigProblem {
  /** JSON path such as `channels[0].webhook.bind`; empty for the whole file. */
  readonly path: string;
  /** What is wrong. */
  readonly message: string;
  /** What to do about it. */
  readonly fix: string;
}

/** Renders a path of keys and indexes as `channels[0].webhook.bind`. */
export function formatJsonPath(segments: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/** One line per problem: `path: message (fix: ...)`. */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.path === "" ? "(file)" : problem.path;
  return `${where}: ${problem.message}. Fix: ${problem.fix}`;
}
