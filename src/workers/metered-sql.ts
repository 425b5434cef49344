/**
 * What a Durable Object did that Cloudflare bills, counted by the object itself: SQLite rows
 * read and written (as its cursors report them), alarms set (each `setAlarm` is billed as one
 * row written) and alarm invocations (each billed as one request). The cost test reads it to
 * price a message; production keeps it only in memory, where it costs two additions a query.
 */
export interface StorageUsage {
  rowsRead: number;
  rowsWritten: number;
  alarmsSet: number;
  alarmRuns: number;
}

/** A row of a query's result. */
export type SqlRow = Record<string, SqlStorageValue>;

/**
 * The object's SQL, every statement run to completion and metered. Results are read in full
 * (`all`), so the cursor's counts are final when they are added up.
 */
export class MeteredSql {
  /** Everything counted since the object was constructed. */
  readonly usage: StorageUsage = { rowsRead: 0, rowsWritten: 0, alarmsSet: 0, alarmRuns: 0 };

  constructor(private readonly sql: SqlStorage) {}

  /** Runs a query and returns every row. */
  all<T extends SqlRow>(query: string, ...bindings: SqlStorageValue[]): T[] {
    const cursor = this.sql.exec<T>(query, ...bindings);
    const rows = cursor.toArray();
    this.usage.rowsRead += cursor.rowsRead;
    this.usage.rowsWritten += cursor.rowsWritten;
    return rows;
  }

  /** Runs a query and returns its first row, if any. */
  first<T extends SqlRow>(query: string, ...bindings: SqlStorageValue[]): T | undefined {
    return this.all<T>(query, ...bindings)[0];
  }

  /** Runs a statement whose rows, if any, do not matter. */
  run(query: string, ...bindings: SqlStorageValue[]): void {
    this.all(query, ...bindings);
  }
}
