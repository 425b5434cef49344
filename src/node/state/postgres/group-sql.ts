/** The building blocks of a lane group's statement (see `postgres-lane-group.ts`). */

/** Makes a parameter (an array, or one value) of the given SQL type; returns its placeholder. */
export type Param = (value: unknown, type: string) => string;

/** One data-modifying statement of a group, or undefined when the group has nothing for it. */
export type Part = (param: Param) => string | undefined;

/** `unnest(...)` of one array parameter per column. */
export const unnest = (param: Param, columns: readonly (readonly [readonly unknown[], string])[]): string =>
  `unnest(${columns.map(([values, type]) => param(values, type)).join(", ")})`;

/** The fence's test of a row whose lane and epoch are the columns `conversation` and `epoch` of `alias`. */
export const fenced = (alias: string): string =>
  `(${alias}.conversation, ${alias}.epoch) IN (SELECT conversation, epoch FROM fence)`;
