/** The documents of a grouped statement: one text parameter, split back in Postgres row for row. */
import { describe, expect, it } from "vitest";
import { DOCUMENTS, documentsText, opaque, unnest } from "../../../../src/node/state/postgres/group-sql.js";
import { emptyDatabase, poolOn } from "./fresh-postgres.js";

// No table is read: a database without the schema will do, one for the file.
const pool = poolOn(await emptyDatabase());

/** Runs `unnest` of a documents column beside a numbered one, as the grouped statements do. */
async function roundTrip(documents: readonly string[]): Promise<{ n: number; document: string }[]> {
  const values: unknown[] = [];
  const param = (value: unknown, type: string): string => {
    values.push(value);
    return `$${values.length}::${type}`;
  };
  const rows = unnest(param, [
    [documents.map((_, index) => index + 1), "int[]"],
    [documents, DOCUMENTS],
  ]);
  const result = await pool.query<{ n: number; document: string }>(
    `SELECT n, document FROM ${rows} AS d(n, document) ORDER BY n`,
    values,
  );
  return result.rows;
}

describe("grouped statements' documents", () => {
  it("arrive one a row, in order, whatever characters their JSON holds", async () => {
    const documents = [
      JSON.stringify({ text: 'quotes " \\ {} , NUL \u0000 record separator \u001e unit \u001f tab \t line\nbreak 🦆' }),
      "",
      `${JSON.stringify({ type: "accepted" })}\n${JSON.stringify({ type: "delivered" })}\n`,
    ];
    expect(await roundTrip(documents)).toEqual(documents.map((document, index) => ({ n: index + 1, document })));
  });

  it("send no row for no documents", async () => {
    expect(await roundTrip([])).toEqual([]);
  });

  it("refuse a value that would split into two rows, or is not text", () => {
    expect(() => documentsText(["{}", "a\u001eb"])).toThrow(/U\+001E/);
    expect(() => documentsText([undefined])).toThrow(/U\+001E/);
  });
});

describe("opaque array parameters", () => {
  it("reach Postgres as the same array, in order, read by `= ANY` as an array", async () => {
    const { rows } = await pool.query<{ n: string; value: string; found: boolean }>(
      `SELECT t.n, t.value, t.value = ANY(${opaque("$2::text[]")}) AS found
         FROM unnest(${opaque("$1::text[]")}) WITH ORDINALITY AS t(value, n) ORDER BY t.n`,
      [
        ["b", "a", "c"],
        ["a", "c"],
      ],
    );
    expect(rows.map((row) => [Number(row.n), row.value, row.found])).toEqual([
      [1, "b", false],
      [2, "a", true],
      [3, "c", true],
    ]);
  });
});
