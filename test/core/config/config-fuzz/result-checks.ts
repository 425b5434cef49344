import type { ConfigProblem } from "../../../../src/core/config/config-problem.js";
import { type ConfigResult, validateConfig } from "../../../../src/core/config/validate-config.js";
import { isRecord } from "../../../../src/core/is-record.js";
import { SECRET_MARKER } from "./fuzz-values.js";
import { pathFault } from "./problem-path.js";

/** The keys `validateConfig` refuses as secrets, compared lower-cased (validate-config.ts). */
const SECRET_NAMES = new Set(["token", "secret", "password", "api_key", "apikey"]);

/**
 * Where the planted secret is in `document`: nowhere, only where a secret must never be shown
 * (under a secret-named key, or as a `*_env` key's value, where a variable's name goes), or also
 * somewhere a mutation moved it out of such a key (a renamed key), where the rule does not say.
 */
export function markerPlacement(document: unknown): "none" | "guarded" | "loose" {
  let found: "none" | "guarded" = "none";
  const pending: { value: unknown; guarded: boolean; root: boolean; inBrains: boolean }[] = [
    { value: document, guarded: false, root: true, inBrains: false },
  ];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    const { value, guarded } = item;
    if (typeof value === "string" && value.includes(SECRET_MARKER)) {
      if (!guarded) return "loose";
      found = "guarded";
    } else if (Array.isArray(value)) {
      for (const child of value) pending.push({ value: child, guarded, root: false, inBrains: false });
    } else if (isRecord(value)) {
      for (const [key, child] of Object.entries(value)) {
        // Under `brains`, a key is a brain's name: "token_env" there names no variable.
        const envKey = key.endsWith("_env") && !item.inBrains;
        const secretKey = SECRET_NAMES.has(key.toLowerCase()) || envKey;
        pending.push({
          value: child,
          guarded: guarded || secretKey,
          root: false,
          inBrains: item.root && key === "brains",
        });
      }
    }
  }
  return found;
}

function isText(value: unknown): value is string {
  return typeof value === "string" && value.trim() !== "";
}

/** What is wrong with one problem or warning of `document`. */
function problemFaults(document: unknown, problem: ConfigProblem, guarded: boolean): string[] {
  const faults: string[] = [];
  if (typeof problem?.path !== "string") return [`a problem without a string path: ${JSON.stringify(problem)}`];
  if (!isText(problem.message)) faults.push("a problem without a message");
  if (!isText(problem.fix)) faults.push("a problem without a fix");
  const pathWrong = pathFault(document, problem.path);
  if (pathWrong !== undefined) faults.push(pathWrong);
  if (/\[object |undefined|NaN/.test(`${problem.message} ${problem.fix}`)) faults.push("shows a value that is no text");
  if (guarded && `${problem.path} ${problem.message} ${problem.fix}`.includes(SECRET_MARKER)) {
    faults.push("repeats the planted secret");
  }
  return faults.map((fault) => `${fault}: ${JSON.stringify(problem).slice(0, 400)}`);
}

/** The result of validating `document`, or what it threw. */
export type Outcome = { readonly result: ConfigResult } | { readonly threw: unknown };

/** Validates `document`, catching a throw (which is a failure of the rule, not of the test). */
export function validate(document: unknown): Outcome {
  try {
    return { result: validateConfig(document) };
  } catch (error) {
    return { threw: error };
  }
}

/**
 * What is wrong with the outcome of `document`: a throw, a result of another shape, a problem
 * without path, message or fix or with a path into nothing, a planted secret shown or accepted,
 * or a valid configuration that does not validate again as it came out.
 */
export function outcomeFaults(document: unknown, outcome: Outcome): string[] {
  if ("threw" in outcome) {
    const error = outcome.threw;
    return [`threw ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`];
  }
  const { result } = outcome;
  const placement = markerPlacement(document);
  const guarded = placement === "guarded";
  if (result.ok === true) {
    const faults: string[] = [];
    if (!isRecord(result.config) || !Array.isArray(result.warnings))
      faults.push("an ok result without config or warnings");
    if (guarded) faults.push("a configuration holding the planted secret is valid");
    for (const warning of result.warnings ?? []) faults.push(...problemFaults(document, warning, guarded));
    // Idempotent by design: the output is the input with its defaults filled in, and every
    // default is a value its own rule accepts, so the output validates again, to itself.
    const again = validate(result.config);
    if (!("result" in again) || !again.result.ok) {
      faults.push(`its own config does not validate again: ${JSON.stringify(again).slice(0, 400)}`);
    } else if (JSON.stringify(again.result.config) !== JSON.stringify(result.config)) {
      faults.push("its own config validates to another config");
    }
    return faults;
  }
  if (result.ok !== false || !Array.isArray(result.problems) || result.problems.length === 0) {
    return [`a result that is neither ok nor problems: ${JSON.stringify(result).slice(0, 400)}`];
  }
  return result.problems.flatMap((problem) => problemFaults(document, problem, guarded));
}
