import type { DeadLetter } from "../dead-letters/dead-letter.js";
import type { Logger } from "../log/logger.js";
import type { Job } from "./job.js";
import type { Settlement } from "./settle-outcome.js";

/**
 * The port through which a settlement reaches a runtime's storage: a conversation's lane of
 * pending jobs, and wherever its dead letters go. The Node job queue implements it over its
 * in-memory lanes and the state backend's job store; the Workers conversation object over
 * its SQLite lane and the dead-letter queue. An operation may answer at once or with a
 * promise; one that throws (or rejects) has stored nothing.
 */
export interface JobLedger {
  /** The job is finished: it leaves its lane and its storage. */
  finish(job: Job): void | Promise<void>;
  /** The job stays first in its lane with its progress, and runs again at `dueAt` (epoch ms). */
  postpone(job: Job, dueAt: number): void | Promise<void>;
  /**
   * The job stays first in its lane with its progress and waits for its receiver: it runs again
   * when the receiver is up, or at `until` (epoch ms) at the latest.
   */
  hold(job: Job, until: number): void | Promise<void>;
  /** The job is dead: it leaves its lane, and its letter is kept. */
  bury(letter: DeadLetter): void | Promise<void>;
}

/**
 * Carries a settlement out on a ledger, then writes its log line: a dead letter is logged
 * once it is stored, so a letter whose storing failed (and whose job runs again) is not
 * reported dead twice. The whole letter goes to the debug level only, as message content does.
 */
export function writeSettlement(settlement: Settlement, ledger: JobLedger, logger: Logger): void | Promise<void> {
  switch (settlement.kind) {
    case "finish":
      return ledger.finish(settlement.job);
    case "postpone":
      return ledger.postpone(settlement.job, settlement.dueAt);
    case "hold":
      return ledger.hold(settlement.job, settlement.until);
    case "bury": {
      const stored = ledger.bury(settlement.letter);
      const log = (): void => {
        const { level, msg, fields } = settlement.log;
        logger[level](msg, fields);
        if (logger.enabled("debug")) logger.debug("dead letter in full", { letter: settlement.letter });
      };
      if (stored instanceof Promise) return stored.then(log);
      log();
      return undefined;
    }
  }
}
