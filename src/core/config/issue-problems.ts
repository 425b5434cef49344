import type { z } from "zod";
import { type ConfigProblem, formatJsonPath } from "./config-problem.js";
import { ENV_NAME } from "./schema-parts.js";

/**
 * A zod issue as problems a person can act on: the JSON path, what is wrong (for a value of the
 * wrong type, what was expected and what was found), and the fix.
 */
export function issueToProblems(issue: z.core.$ZodIssue): ConfigProblem[] {
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((key) => ({
      path: formatJsonPath([...issue.path, key]),
      message: `unknown key "${key}"`,
      fix: "remove it or correct its spelling (see config.schema.json for the allowed keys)",
    }));
  }
  const path = formatJsonPath(issue.path);
  // JSON has no undefined, so with reportInput an undefined input is a key that is absent (a
  // missing literal, such as a channel's "type", is an invalid value rather than type).
  if ((issue.code === "invalid_type" || issue.code === "invalid_value") && issue.input === undefined) {
    const rule =
      schemaRule(issue) ??
      (issue.code === "invalid_type"
        ? expectedType(issue.expected)
        : `one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`);
    return [{ path, message: "is required", fix: `add "${String(issue.path.at(-1) ?? "")}" (${rule})` }];
  }
  if (issue.code === "invalid_type") {
    if (issue.path.length === 0) {
      return [
        {
          path,
          message: `expected a JSON object at the top level, found ${describeValue(issue.input)}`,
          fix: 'write the whole file as one object: { "channels": [ ... ], "routes": [ ... ] }',
        },
      ];
    }
    const expected = expectedType(issue.expected);
    const rule = schemaRule(issue);
    return [
      {
        path,
        message: `expected ${expected}, found ${describeValue(issue.input)}`,
        fix: rule === undefined ? `give ${expected}` : `it ${rule}`,
      },
    ];
  }
  if (issue.code === "invalid_value") {
    return [{ path, message: `${issue.message}, found ${describeValue(issue.input)}`, fix: fixFor(issue) }];
  }
  return [{ path, message: issue.message, fix: fixFor(issue) }];
}

/** The schema's own wording of a rule ("must be ..."), or undefined when zod's default is all there is. */
function schemaRule(issue: z.core.$ZodIssue): string | undefined {
  return issue.message.startsWith("Invalid input") ? undefined : issue.message;
}

/** A zod type name as a person would say it: "a string", "a whole number", "a JSON object". */
function expectedType(expected: string): string {
  switch (expected) {
    case "int":
      return "a whole number";
    case "boolean":
      return "true or false";
    case "object":
    case "record":
      return "a JSON object";
    case "array":
      return "an array";
    default:
      return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
  }
}

/** Longest string shown back in a message; a pasted document should not fill the terminal. */
const MAX_SHOWN_STRING = 40;

/**
 * What a value in the file is, for "found ...": `the number 8090`, `an array`, `null`. Showing
 * it is safe: secrets belong in the environment, and a key named like one is reported by
 * {@link findSecretKeys} without its value (its schema issue is dropped).
 */
function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(value.length > MAX_SHOWN_STRING ? `${value.slice(0, MAX_SHOWN_STRING)}…` : value)}`;
    case "number":
      return `the number ${value}`;
    case "boolean":
      return `the boolean ${value}`;
    case "object":
      return "an object";
    default:
      return typeof value;
  }
}

function fixFor(issue: z.core.$ZodIssue): string {
  // A rule of the schema that knows its own fix gives it with its `params`.
  const fix: unknown = issue.code === "custom" ? issue.params?.fix : undefined;
  if (typeof fix === "string") return fix;
  switch (issue.code) {
    case "invalid_type":
      return `give ${expectedType(issue.expected)}`;
    case "too_small":
    case "too_big":
      return "change the value to fit the limit above";
    case "invalid_value":
      return `use one of ${issue.values.map((value) => JSON.stringify(value)).join(", ")}`;
    case "invalid_format":
      return issue.format === "regex" && issue.pattern === String(ENV_NAME)
        ? 'write the name the variable is exported under: letters, digits and "_", not starting with a digit'
        : "write the value in the form the message gives";
    default:
      return "change the value as described";
  }
}
