import type { DeadLetterItem } from "./dead-letter-item.js";

/** One page of dead letters, oldest first. */
export interface DeadLetterPage {
  readonly items: readonly DeadLetterItem[];
  /** Where the next page starts (opaque to clients), or null after the last one. */
  readonly nextCursor: string | null;
}

/** What `list` is asked for. */
export interface DeadLetterQuery {
  readonly channel?: string;
  /** 1 to 500; the routes check it. */
  readonly limit: number;
  /** A `nextCursor` given before; undefined for the first page. */
  readonly cursor?: string;
}

/**
 * The port the admin routes read and act on dead letters through, so that they never know the
 * store: implemented once, over any runtime's `DeadLetterStore`, by `createAdminDeadLetters`
 * (`core/dead-letters/`), and over HTTP by the CLI's `--url` client.
 */
export interface AdminDeadLetters {
  list(query: DeadLetterQuery): Promise<DeadLetterPage>;
  get(id: string): Promise<DeadLetterItem | undefined>;
  /**
   * Puts the dead letters back on their queue to run again (kept replies are posted again,
   * the brain is not asked again). `ids` undefined: all (of `channel`, when given). Returns
   * how many were re-queued; unknown ids are skipped.
   */
  replay(filter: { readonly channel?: string; readonly ids?: readonly string[] }): Promise<number>;
  /** Forgets one dead letter; false when there was none with this id. */
  delete(id: string): Promise<boolean>;
}
