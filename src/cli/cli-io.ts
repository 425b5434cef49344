import type { HeldHangUps, HeldStops } from "../node/held-signals.js";

/** Where the CLI reads and writes; the real process by default. */
export interface CliIo {
  readonly env: NodeJS.ProcessEnv;
  readonly out: (text: string) => void;
  readonly err: (text: string) => void;
  /** The delivery thread's module for `serve` (see RunOptions); absent in tests. */
  readonly deliveryWorker?: URL;
  /** The SQLite timeline's writer thread's module for `serve` (see RunOptions); absent in tests. */
  readonly timelineWriter?: URL;
  /** The signals the entry held for `serve` while the commands loaded (see RunOptions). */
  readonly heldHangUps?: HeldHangUps;
  readonly heldStops?: HeldStops;
  /** How long a `--url` command waits for each admin API answer (see ADMIN_CALL_TIMEOUT_MS); shorter in tests. */
  readonly adminTimeoutMs?: number;
}
