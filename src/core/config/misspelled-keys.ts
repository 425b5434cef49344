import type { ConfigProblem } from "./config-problem.js";

/** The part of a dotted JSON path before its last key, and that key; undefined for a bracketed key. */
function splitPath(path: string): { readonly parent: string; readonly key: string } | undefined {
  const match = /^(?:(.*)\.)?([A-Za-z_][A-Za-z0-9_]*)$/.exec(path);
  if (match === null) return undefined;
  return { parent: match[1] ?? "", key: match[2] ?? "" };
}

/** Edits (insert, delete, replace, swap two neighbours) between `a` and `b`, counting up to `limit` + 1. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, (previous[j - 1] ?? 0) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, (before[j - 2] ?? 0) + 1);
      current.push(best);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length] ?? limit + 1;
}

/**
 * A required key written with a typo gives two problems of one object: the key "is required",
 * and an unknown key. Where the unknown one is a few edits from the required one, the two are
 * said as one, with the key it was meant to be: the fix is a rename, not a new key.
 */
export function joinMisspelledKeys(problems: readonly ConfigProblem[]): ConfigProblem[] {
  const required = problems.filter((problem) => problem.message === "is required");
  const joined = new Set<ConfigProblem>();
  const renames = new Map<ConfigProblem, ConfigProblem>();
  for (const problem of problems) {
    const unknown = /^unknown key "/.test(problem.message) ? splitPath(problem.path) : undefined;
    if (unknown === undefined) continue;
    const meant = required.find((candidate) => {
      const wanted = splitPath(candidate.path);
      if (joined.has(candidate) || wanted === undefined || wanted.parent !== unknown.parent) return false;
      return editDistance(unknown.key, wanted.key, 2) <= Math.min(2, Math.floor(wanted.key.length / 3));
    });
    const wanted = meant === undefined ? undefined : splitPath(meant.path);
    if (meant === undefined || wanted === undefined) continue;
    joined.add(meant);
    renames.set(problem, {
      path: problem.path,
      message: `unknown key "${unknown.key}", likely a typo of "${wanted.key}", which is required`,
      fix: `rename it to "${wanted.key}"`,
    });
  }
  return problems.filter((problem) => !joined.has(problem)).map((problem) => renames.get(problem) ?? problem);
}
