import type { Statement } from "better-sqlite3";
import type { StateDb } from "./sqlite-state.js";

/** Rows per statement at most: 64 rows of 5 values stay far below SQLite's 32,766 parameters. */
const MAX_ROWS = 64;

/** Runs one statement for many rows: see {@link createRowBatch}. */
export type RowBatch = (rows: readonly (readonly unknown[])[]) => void;

/**
 * One statement for many rows of `width` values each, instead of a statement per row:
 * `sql(values)` gets the `VALUES (?, ?), (?, ?) ...` list for a number of rows and returns the
 * statement around it. Statements are prepared once per row count (at most {@link MAX_ROWS},
 * a longer list runs in chunks), so a group of the same size costs no new preparation. Plain
 * parameters rather than one JSON array read with `json_each`: SQLite then parses no JSON.
 */
export function createRowBatch(db: StateDb, width: number, sql: (values: string) => string): RowBatch {
  const prepared = new Map<number, Statement<unknown[]>>();
  const tuple = `(${Array.from({ length: width }, () => "?").join(", ")})`;
  const statementFor = (count: number): Statement<unknown[]> => {
    let statement = prepared.get(count);
    if (statement === undefined) {
      statement = db.prepare<unknown[]>(sql(Array.from({ length: count }, () => tuple).join(", ")));
      prepared.set(count, statement);
    }
    return statement;
  };
  return (rows) => {
    for (let start = 0; start < rows.length; start += MAX_ROWS) {
      const chunk = rows.slice(start, start + MAX_ROWS);
      statementFor(chunk.length).run(...chunk.flat());
    }
  };
}
