import type { CircuitStore, HeldLanes } from "../../core/receiver/circuit-store.js";
import { type CircuitState, RECEIVER_UP } from "../../core/receiver/receiver-circuit.js";
import type { MeteredSql } from "../metered-sql.js";

/**
 * The receiver object's tables: its circuit state (one row, plain JSON, with the version a write
 * names), the channel it is the receiver of, and the conversations waiting for it, in the order
 * they began to wait. The object is the circuit's only writer, so a version check never fails
 * here; it is the core's `CircuitStore` and `HeldLanes` all the same.
 */
export class ReceiverStorage implements CircuitStore, HeldLanes {
  private known: string | undefined;
  /** The circuit as last read or written: the object is its only writer, so it stays true. */
  private circuit: { readonly state: CircuitState; readonly version: number } | undefined;
  /**
   * The conversations waiting, counted once per instance and kept since: the keeper asks at every
   * report and timer, and a count of the table reads (and bills) every row, which over an outage
   * of N conversations would be N reads N times.
   */
  private waitingCount: number | undefined;

  constructor(private readonly sql: MeteredSql) {
    sql.run("CREATE TABLE IF NOT EXISTS circuit (only INTEGER PRIMARY KEY CHECK (only = 1), state TEXT NOT NULL)");
    sql.run("CREATE TABLE IF NOT EXISTS channel (only INTEGER PRIMARY KEY CHECK (only = 1), name TEXT NOT NULL)");
    sql.run(
      "CREATE TABLE IF NOT EXISTS waiting (seq INTEGER PRIMARY KEY AUTOINCREMENT, conversation TEXT NOT NULL UNIQUE)",
    );
  }

  /** The channel this object is the receiver of, once a report named it (the alarm needs it). */
  channel(): string | undefined {
    return this.sql.first<{ name: string }>("SELECT name FROM channel WHERE only = 1")?.name;
  }

  /** Remembers the channel, once. */
  rememberChannel(name: string): void {
    if (this.known === name) return;
    this.sql.run("INSERT OR REPLACE INTO channel (only, name) VALUES (1, ?)", name);
    this.known = name;
  }

  /** The circuit as last saved; up when nothing was (the version travels in the JSON). */
  read(): { readonly state: CircuitState; readonly version: number } {
    this.circuit ??= this.load();
    return this.circuit;
  }

  private load(): { readonly state: CircuitState; readonly version: number } {
    const row = this.sql.first<{ state: string }>("SELECT state FROM circuit WHERE only = 1");
    if (row === undefined) return { state: RECEIVER_UP, version: 0 };
    try {
      const { version, ...state } = JSON.parse(row.state) as CircuitState & { version?: number };
      return { state, version: version ?? 0 };
    } catch {
      return { state: RECEIVER_UP, version: 0 };
    }
  }

  write(_channel: string, state: CircuitState, version: number): boolean {
    if (this.read().version !== version) return false;
    this.sql.run(
      "INSERT OR REPLACE INTO circuit (only, state) VALUES (1, ?)",
      JSON.stringify({ ...state, version: version + 1 }),
    );
    this.circuit = { state, version: version + 1 };
    return true;
  }

  add(conversation: string): void {
    const added = this.sql.all("INSERT OR IGNORE INTO waiting (conversation) VALUES (?) RETURNING seq", conversation);
    this.counted(added.length);
  }

  addFirst(conversation: string): void {
    const added = this.sql.all(
      "INSERT OR IGNORE INTO waiting (seq, conversation) VALUES ((SELECT COALESCE(MIN(seq), 1) - 1 FROM waiting), ?) RETURNING seq",
      conversation,
    );
    this.counted(added.length);
  }

  take(limit: number): string[] {
    const rows = this.sql.all<{ seq: number; conversation: string }>(
      "SELECT seq, conversation FROM waiting ORDER BY seq LIMIT ?",
      limit,
    );
    const last = rows.at(-1);
    if (last !== undefined) this.sql.run("DELETE FROM waiting WHERE seq <= ?", last.seq);
    this.counted(-rows.length);
    return rows.map((row) => row.conversation);
  }

  delete(conversation: string): void {
    this.counted(-this.sql.all("DELETE FROM waiting WHERE conversation = ? RETURNING seq", conversation).length);
  }

  count(): number {
    this.waitingCount ??= this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM waiting")?.n ?? 0;
    return this.waitingCount;
  }

  /** Moves the kept count by rows added (or, negative, taken away), once it is known. */
  private counted(change: number): void {
    if (this.waitingCount !== undefined) this.waitingCount += change;
  }
}
