/** One problem (or warning) found in a configuration, located by JSON path. */
export interface ConfigProblem {
  /** JSON path such as `channels[0].webhook.bind`; empty for the whole file. */
  readonly path: string;
  /** What is wrong. */
  readonly message: string;
  /** What to do about it. */
  readonly fix: string;
}

/** A key a path shows bare: anything but empty, spaces, quotes and brackets. */
const PLAIN_KEY = /^[^\s"'[\]\p{Cc}]+$/u;

/** Renders a path of keys and indexes as `channels[0].webhook.bind`. */
export function formatJsonPath(segments: readonly PropertyKey[]): string {
  let out = "";
  for (const segment of segments) {
    if (typeof segment === "number") out += `[${segment}]`;
    // A key that would not read back as one (empty, spaced, bracketed) is quoted.
    else if (typeof segment === "string" && !PLAIN_KEY.test(segment)) out += `[${JSON.stringify(segment)}]`;
    else out += out === "" ? String(segment) : `.${String(segment)}`;
  }
  return out;
}

/** One line per problem: `path: message (fix: ...)`. */
export function formatProblem(problem: ConfigProblem): string {
  const where = problem.path === "" ? "(file)" : problem.path;
  return `${where}: ${problem.message}. Fix: ${problem.fix}`;
}
