import type { Server } from "node:http";
import type { Logger } from "../../core/log/logger.js";

/** What {@link capConnections} needs besides the server. */
export interface ConnectionCapOptions {
  /** The listener's bind, named in the warning. */
  readonly bind: string;
  /** Open connections the server keeps at once. */
  readonly max: number;
  readonly logger: Logger;
  /** Milliseconds, for spacing the warnings. */
  readonly now: () => number;
  /** Least time between two warnings. */
  readonly warnEveryMs: number;
}

/**
 * Caps the open connections of a server. Node's own `maxConnections` is used: a connection
 * beyond it is closed as soon as it is accepted, before a byte is read, and the open ones are
 * untouched. A flood of refusals is logged as one warning per `warnEveryMs`, with how many
 * were refused since the last one; the log must not become the next thing to exhaust.
 * The cap can be changed later (a reload) by setting `server.maxConnections`.
 */
export function capConnections(server: Server, options: ConnectionCapOptions): void {
  const { bind, logger, now, warnEveryMs } = options;
  server.maxConnections = options.max;
  let refused = 0;
  let lastWarning: number | undefined;
  server.on("drop", () => {
    refused += 1;
    const at = now();
    if (lastWarning !== undefined && at - lastWarning < warnEveryMs) return;
    lastWarning = at;
    logger.warn("max_connections reached: new connections are refused until open ones close", {
      bind,
      max_connections: server.maxConnections,
      refused,
    });
    refused = 0;
  });
}
