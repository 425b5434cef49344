/** The building blocks of the grouped statements (a lane group's, see `postgres-lane-group.ts`; the timeline's). */

/** Makes a parameter (an array, or one value) of the given SQL type; returns its placeholder. */
export type Param = (value: unknown, type: string) => string;

/** One data-modifying statement of a group, or undefined when the group has nothing for it. */
export type Part = (param: Param) => string | undefined;

/**
 * A column of documents (each a JSON text: a job, a turn, a letter), sent as one JSON array of
 * strings: the client's array literal escapes every quote of every document in JavaScript, where
 * `JSON.stringify` does it natively, and the server reads either as fast.
 */
export const DOCUMENTS = "documents";

/** The text array of a {@link DOCUMENTS} column whose JSON array is the parameter `placeholder`. */
export const documentsArray = (placeholder: string): string =>
  `ARRAY(SELECT d FROM json_array_elements_text(${placeholder}) WITH ORDINALITY AS x(d, n) ORDER BY n)`;

/** `unnest(...)` of one array parameter per column ({@link DOCUMENTS}: see there). */
export const unnest = (param: Param, columns: readonly (readonly [readonly unknown[], string])[]): string =>
  `unnest(${columns
    .map(([values, type]) =>
      type === DOCUMENTS ? documentsArray(param(JSON.stringify(values), "json")) : param(values, type),
    )
    .join(", ")})`;

/** The fence's test of a row whose lane and epoch are the columns `conversation` and `epoch` of `alias`. */
export const fenced = (alias: string): string =>
  `(${alias}.conversation, ${alias}.epoch) IN (SELECT conversation, epoch FROM fence)`;
