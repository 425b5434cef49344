import type { StorageUsage } from "../metered-sql.js";

/**
 * The one alarm of a conversation object, as the object last set it. `setAlarm` is billed as a
 * row written, so the time it was set to is kept in memory (read once from storage) and an
 * alarm already set to the time asked for is not set again.
 */
export class ConversationAlarm {
  /** Epoch ms, null for none, undefined until read. */
  private at: number | null | undefined;

  /** `usage` counts the alarms set and the alarm runs (the cost test reads it). */
  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly usage: StorageUsage,
  ) {}

  /** The alarm fired: none is set until the object sets one. */
  fired(): void {
    this.at = null;
    this.usage.alarmRuns += 1;
  }

  /** Storage was deleted, the alarm with it. */
  forget(): void {
    this.at = null;
  }

  /** When the alarm is set to, or null. */
  async current(): Promise<number | null> {
    this.at ??= await this.storage.getAlarm();
    return this.at;
  }

  /** Sets the alarm to `at`, unless it is set to that already. */
  async set(at: number): Promise<void> {
    if ((await this.current()) === at) return;
    this.usage.alarmsSet += 1;
    try {
      await this.storage.setAlarm(at);
    } catch (error) {
      // Not known to be set: read from storage again next time, rather than skip a needed alarm.
      this.at = undefined;
      throw error;
    }
    this.at = at;
  }

  /**
   * Makes sure the alarm fires at `now` at the latest: work that a call leaves running is then
   * taken on by an alarm invocation, which the platform keeps alive and tries again should the
   * object stop, whatever happens to this instance.
   */
  async byNow(now: number): Promise<void> {
    const at = await this.current();
    if (at !== null && at <= now) return;
    await this.set(now);
  }
}
