/** The building blocks of the grouped statements (a lane group's, see `postgres-lane-group.ts`; the timeline's). */

/** Makes a parameter (an array, or one value) of the given SQL type; returns its placeholder. */
export type Param = (value: unknown, type: string) => string;

/** One data-modifying statement of a group, or undefined when the group has nothing for it. */
export type Part = (param: Param) => string | undefined;

/**
 * A column of documents (each a JSON text, or JSON texts on lines of their own: a job, a turn, a
 * letter, a message's timeline events), sent as one text parameter, each document after a record
 * separator (U+001E). `JSON.stringify` escapes every control character, so no document holds the
 * separator: splitting on it is exact, and costs neither side an escape, where an array literal
 * (the client escapes every quote) or a JSON array (the server unescapes every string) costs one.
 */
export const DOCUMENTS = "documents";

const SEPARATOR = "\u001e";

/**
 * The parameter of a {@link DOCUMENTS} column: every document after a separator. Throws on a
 * value that is not text or holds the separator: sent, it would shift every later document onto
 * another row, where `unnest` pads the shorter columns instead of failing.
 */
export function documentsText(documents: readonly unknown[]): string {
  let text = "";
  for (const document of documents) {
    if (typeof document !== "string" || document.includes(SEPARATOR)) {
      throw new Error("a document column holds only JSON texts, which never contain U+001E");
    }
    text += SEPARATOR + document;
  }
  return text;
}

/**
 * The text array of a {@link DOCUMENTS} column whose {@link documentsText} is the parameter
 * `placeholder`, without the empty text before the first separator. A sub-select, so that the
 * planner never folds the parameter into a constant: a plan made for one call's parameters would
 * count that call's rows exactly, look cheaper than a plan for any call, and have Postgres plan
 * each call afresh instead of keeping one plan for the statement.
 */
export const documentsArray = (placeholder: string): string =>
  `ARRAY(SELECT d FROM unnest(string_to_array(${placeholder}, chr(30))) WITH ORDINALITY AS x(d, n) WHERE n > 1 ORDER BY n)`;

/**
 * The array parameter `placeholder` (written with its cast, `$1::text[]`, as {@link Param} makes
 * it) as a value of that type that the planner cannot fold into a constant, for the named statements' arrays (see
 * `named-statements.ts`). A plan made for a call's constant arrays counts their rows exactly and
 * looks cheaper than the generic plan, which must guess them: Postgres then plans that statement
 * afresh at every call, which costs more than running it. Behind a sub-select every plan guesses
 * alike, so Postgres keeps the generic one after its first few calls. The cast outside makes
 * `= ANY(...)` read the sub-select as an array, not as a set of rows.
 */
export const opaque = (placeholder: string): string =>
  `(SELECT ${placeholder})::${placeholder.slice(placeholder.lastIndexOf("::") + 2)}`;

/** `unnest(...)` of one array parameter per column, each {@link opaque} ({@link DOCUMENTS}: see there). */
export const unnest = (param: Param, columns: readonly (readonly [readonly unknown[], string])[]): string =>
  `unnest(${columns
    .map(([values, type]) =>
      type === DOCUMENTS ? documentsArray(param(documentsText(values), "text")) : opaque(param(values, type)),
    )
    .join(", ")})`;

/** The fence's test of a row whose lane and epoch are the columns `conversation` and `epoch` of `alias`. */
export const fenced = (alias: string): string =>
  `(${alias}.conversation, ${alias}.epoch) IN (SELECT conversation, epoch FROM fence)`;
