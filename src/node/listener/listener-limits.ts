/**
 * The bounds every listener puts on its connections, against slow or stalled clients
 * (slowloris). The service always uses {@link DEFAULT_LISTENER_LIMITS}; tests pass shorter
 * ones so that a timeout can be watched with real sockets in a few seconds.
 */
export interface ListenerLimits {
  /** All of a request's headers must arrive within this, from the connection's first byte. */
  readonly headersTimeoutMs: number;
  /** The whole request, body included, must arrive within this. */
  readonly requestTimeoutMs: number;
  /**
   * An idle keep-alive connection is closed after this (advertised as `Keep-Alive: timeout=`;
   * Node waits one more second before closing, so that a client reusing the connection right
   * at the deadline does not lose its request).
   */
  readonly keepAliveTimeoutMs: number;
  /**
   * How often Node looks for connections past `headersTimeoutMs` or `requestTimeoutMs`. Node's
   * default, 30 s, let a dripping client hold a connection up to 30 s past its deadline.
   */
  readonly checkIntervalMs: number;
  /** Least time between two warnings about connections refused at `max_connections`. */
  readonly refusalWarningIntervalMs: number;
}

/** The limits the service runs with, as docs/security.md lists them. */
export const DEFAULT_LISTENER_LIMITS: ListenerLimits = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  // Half a second keeps every close within a second of its deadline, for one walk of the
  // open connections twice a second.
  checkIntervalMs: 500,
  refusalWarningIntervalMs: 60_000,
};
