import type pg from "pg";

/**
 * The most statement texts a process names. Past it a new text is sent unnamed, parsed and
 * planned at every call, so that a bug that made texts vary could not fill each session with
 * plans: the grouped statement's parts make a bounded number of shapes, of which a replica uses
 * few.
 */
export const MAX_NAMED_STATEMENTS = 64;

const names = new Map<string, string>();

/**
 * `text` as a named statement: each session of the pool parses it once, and once Postgres has
 * planned it a few times it keeps one generic plan for it when that plan costs no more than one
 * made for the values at hand, which the statement's arrays see to by being opaque (`opaque` in
 * `group-sql.ts`); an unnamed statement is parsed, analysed and planned at every call. The
 * statements of a message's path are a few shapes over array parameters, and planning them again
 * at every call was a large share of the database's work (see docs/performance.md).
 *
 * A generic plan is made for the tables as they are when it is made: made while a table was
 * small, it may scan the whole table on every call once it has grown. The pool's sessions turn
 * sequential scans off (see `openPostgresPool`), so every such plan finds its rows through an
 * index whatever the tables' size then. Names are per process and per session: `wc` and a
 * number, in the order the texts were first sent.
 */
export function namedStatement(text: string, values: unknown[]): pg.QueryConfig<unknown[]> {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_NAMED_STATEMENTS) {
    name = `wc${names.size + 1}`;
    names.set(text, name);
  }
  return name === undefined ? { text, values } : { name, text, values };
}
