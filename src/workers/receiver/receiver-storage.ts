import { type CircuitState, RECEIVER_UP } from "../../core/receiver/receiver-circuit.js";
import type { MeteredSql } from "../metered-sql.js";

/**
 * The receiver object's two tables: its circuit state (one row, plain JSON) and the
 * conversations waiting for it, in the order they began to wait.
 */
export class ReceiverStorage {
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

  private known: string | undefined;

  /** The circuit as last saved; up when nothing was. */
  state(): CircuitState {
    const row = this.sql.first<{ state: string }>("SELECT state FROM circuit WHERE only = 1");
    if (row === undefined) return RECEIVER_UP;
    try {
      return JSON.parse(row.state) as CircuitState;
    } catch {
      return RECEIVER_UP;
    }
  }

  save(state: CircuitState): void {
    this.sql.run("INSERT OR REPLACE INTO circuit (only, state) VALUES (1, ?)", JSON.stringify(state));
  }

  /** Adds a waiting conversation (by its object's name) at the end, unless it waits already. */
  addWaiting(conversation: string): void {
    this.sql.run("INSERT OR IGNORE INTO waiting (conversation) VALUES (?)", conversation);
  }

  /** Puts a conversation back first in line (its wake-up failed). */
  addWaitingFirst(conversation: string): void {
    this.sql.run(
      "INSERT OR IGNORE INTO waiting (seq, conversation) VALUES ((SELECT COALESCE(MIN(seq), 1) - 1 FROM waiting), ?)",
      conversation,
    );
  }

  /** Removes and returns the `limit` conversations that have waited longest. */
  takeWaiting(limit: number): string[] {
    const rows = this.sql.all<{ seq: number; conversation: string }>(
      "SELECT seq, conversation FROM waiting ORDER BY seq LIMIT ?",
      limit,
    );
    const last = rows.at(-1);
    if (last !== undefined) this.sql.run("DELETE FROM waiting WHERE seq <= ?", last.seq);
    return rows.map((row) => row.conversation);
  }

  /** Conversations waiting. */
  waitingCount(): number {
    return this.sql.first<{ n: number }>("SELECT COUNT(*) AS n FROM waiting")?.n ?? 0;
  }
}
