import { DurableObject } from "cloudflare:workers";
import type { AuthFailureBlock, AuthFailureLimit } from "../../core/auth-limit/auth-failure-limiter.js";
import { addFailure, blockOf, emptyWindow, type FailureWindow } from "../../core/auth-limit/failure-window.js";

type WindowRow = { times: string; warned_at: number | null };

/**
 * The failed authentications of one client address on one channel, addressed by
 * `idFromName(limitKey(channel, address))`: the core's sliding window, kept in SQLite so that
 * every isolate and location counts the same failures. The window lives in memory while the
 * object does, and every change is written before the call returns. An alarm forgets the
 * address once its last failure has left the window, so idle addresses cost no storage.
 */
export class AuthFailureObject extends DurableObject<unknown> {
  private readonly sql: SqlStorage;
  private window: FailureWindow;

  constructor(ctx: DurableObjectState, env: unknown) {
    super(ctx, env);
    this.sql = ctx.storage.sql;
    this.createTables();
    this.window = this.load();
  }

  /** The refusal that applies at `now`, or null when a request from the address may be checked. */
  check(now: number, limit: AuthFailureLimit): AuthFailureBlock | null {
    const warnedAt = this.window.warnedAt;
    const block = blockOf(this.window, now, limit);
    if (this.window.warnedAt !== warnedAt) this.save();
    return block ?? null;
  }

  /** Counts a failed authentication at `now`; the address is forgotten one window after its last one. */
  async recordFailure(now: number, limit: AuthFailureLimit): Promise<void> {
    addFailure(this.window, now, limit);
    this.save();
    await this.ctx.storage.setAlarm(Date.now() + limit.windowMs);
  }

  /** The last failure left the window: nothing of the address is kept. */
  override async alarm(): Promise<void> {
    await this.ctx.storage.deleteAll();
    this.createTables();
    this.window = emptyWindow();
  }

  private load(): FailureWindow {
    const row = this.sql.exec<WindowRow>("SELECT times, warned_at FROM failure_window WHERE only = 1").toArray()[0];
    if (row === undefined) return emptyWindow();
    return { times: JSON.parse(row.times) as number[], warnedAt: row.warned_at };
  }

  private save(): void {
    this.sql.exec(
      "INSERT OR REPLACE INTO failure_window (only, times, warned_at) VALUES (1, ?, ?)",
      JSON.stringify(this.window.times),
      this.window.warnedAt,
    );
  }

  private createTables(): void {
    this.sql.exec(
      "CREATE TABLE IF NOT EXISTS failure_window (only INTEGER PRIMARY KEY CHECK (only = 1), times TEXT NOT NULL, warned_at INTEGER)",
    );
  }
}
