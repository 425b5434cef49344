import { isRecord } from "../is-record.js";
import { type ConfigProblem, formatJsonPath } from "./config-problem.js";

/** Whether `name` holds a control character, which no name of a channel or brain may. */
export function hasControlCharacter(name: string): boolean {
  return /\p{Cc}/u.test(name);
}

/** Why a name may not hold one: names go into log lines, metric labels and the databases' rows. */
export const NAME_CONTROL_MESSAGE =
  "holds a control character, which log lines, metric labels and Postgres (U+0000) cannot carry";

/** Names of the brains every configuration has without defining them. */
export const BUILT_IN_BRAINS: readonly string[] = ["echo"];

/**
 * The names under `brains` no definition may take, read from the document as written: an empty
 * name, a built-in brain's (a definition would quietly replace it for every route and fallback
 * that names it), and `__proto__`, which a parsed object cannot hold as a key (the definition
 * would vanish, and a route naming it would be told no such brain exists).
 */
export function brainNameProblems(document: unknown): ConfigProblem[] {
  if (!isRecord(document) || !isRecord(document.brains)) return [];
  const problems: ConfigProblem[] = [];
  for (const name of Object.keys(document.brains)) {
    const path = formatJsonPath(["brains", name]);
    if (name === "") {
      problems.push({ path, message: "a brain's name is empty", fix: "give the brain a name its routes can use" });
    } else if (BUILT_IN_BRAINS.includes(name)) {
      problems.push({
        path,
        message: `"${name}" is the built-in brain's name: every route and fallback naming it would call this definition instead`,
        fix: `give this brain another name, and use that name where it is meant`,
      });
    } else if (hasControlCharacter(name)) {
      problems.push({ path, message: NAME_CONTROL_MESSAGE, fix: "give the brain a name of printable characters" });
    } else if (name === "__proto__") {
      problems.push({ path, message: `"${name}" cannot name a brain`, fix: "give the brain another name" });
    }
  }
  return problems;
}
