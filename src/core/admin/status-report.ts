/** Messages of one channel counted since {@link StatusReport.counting_since}. */
export interface ChannelCounts {
  readonly accepted: number;
  /** Messages whose replies were all delivered. */
  readonly delivered: number;
  /** Attempts that failed and will be tried again. */
  readonly retrying: number;
  readonly dead_lettered: number;
}

/** How one channel stands in `GET /admin/status`; null where the runtime cannot say. */
export interface ChannelStatus {
  readonly channel: string;
  readonly counts: ChannelCounts | null;
  readonly queue: {
    /** Accepted messages not yet finished. */
    readonly depth: number;
    /** `webhook.buffer_capacity`. */
    readonly capacity: number;
    /** When the oldest unfinished message was accepted, RFC 3339 in UTC; null when none. */
    readonly oldest_pending_at: string | null;
  } | null;
  readonly receiver: {
    readonly up: boolean;
    /** When it went down, RFC 3339; null while up. */
    readonly since: string | null;
    /** Conversations whose replies wait for it. */
    readonly waiting: number;
    /** When it is tried again, RFC 3339; null while up. */
    readonly next_probe_at: string | null;
  } | null;
}

/** How one brain that calls out stands: its calls in flight and its pause. */
export interface BrainStatus {
  readonly brain: string;
  readonly in_flight: number;
  /** Paused for everyone after its server answered 429 or 503. */
  readonly paused: boolean;
  /** When the pause began, RFC 3339; null while not paused. */
  readonly paused_since: string | null;
  /**
   * When the pause ends, RFC 3339; null while not paused. It may move later while paused: a
   * call that was in flight when the pause began can lengthen it to its own `Retry-After`.
   */
  readonly paused_until: string | null;
}

/**
 * The body of `GET /admin/status` (the console's live view), in the HTTP API's names. A field
 * the runtime cannot fill is null, and `not_available` says in a sentence each what is missing
 * and where to find it instead, so that a null is never mistaken for a zero.
 */
export interface StatusReport {
  readonly runtime: "node" | "workers";
  /**
   * With several replicas (Postgres), the one that answered: its counts, queue and held
   * conversations are its own, while the receivers' state and the dead letters are the service's.
   */
  readonly replica?: string;
  /** When this report was made, RFC 3339 in UTC. */
  readonly generated_at: string;
  /** Since when `counts` count (the service's start); null when nothing is counted. */
  readonly counting_since: string | null;
  readonly channels: readonly ChannelStatus[];
  /** Brains with limits (those that call out); null when the runtime cannot say. */
  readonly brains: readonly BrainStatus[] | null;
  /** Dead letters listed now, every channel's; null when the store did not answer. */
  readonly dead_letters: number | null;
  readonly not_available: readonly string[];
}

/**
 * The port `GET /admin/status` reads through: each runtime says what it knows (Node: its
 * queues, receiver gates, brain limiters and counts; Workers: its receiver objects and the
 * dead-letter store). Asked on every request; never given a secret.
 */
export interface StatusSource {
  report(): StatusReport | Promise<StatusReport>;
}

/** An epoch time as the report shows it, null for none. */
export function isoOrNull(epochMs: number | undefined): string | null {
  return epochMs === undefined ? null : new Date(epochMs).toISOString();
}
