import { stateUnavailableError } from "../../../core/app/refusals.js";
import { type ChannelError, isChannelError } from "../../../core/channel-error.js";

/**
 * A failed Postgres write as the service answers it: 503 `state_unavailable`, retryable. Every
 * write of the stores is an upsert or a delete by key, so the client's retry (on this replica or
 * another) is safe whatever went wrong; the cause stays attached for the log.
 */
export function asStateError(error: unknown): ChannelError {
  return isChannelError(error) ? error : stateUnavailableError(error);
}

/**
 * The text of a pg or socket error, for logs and `/readyz`. A refused connection to a host
 * with several addresses is an AggregateError whose own message is empty: its first error
 * says what happened. No error of pg carries the password.
 */
export function postgresErrorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.message === "") {
    const first: unknown = error.errors[0];
    if (first !== undefined) return postgresErrorMessage(first);
  }
  if (error instanceof Error) {
    const code = "code" in error ? error.code : undefined;
    // pg's parse of the connection string; the URL itself is never echoed, it may hold the password.
    if (code === "ERR_INVALID_URL") {
      return "the connection string is not a URL pg can read: check its host and port (1 to 65535), and percent-encode reserved characters in its password (/ as %2F, # as %23, ? as %3F, @ as %40)";
    }
    if (error.message !== "") return error.message;
    return typeof code === "string" ? code : error.name;
  }
  return String(error);
}

/**
 * What pg said behind a store's failure, for a person at the command line: the stores answer a
 * failure as the service would (503 `state_unavailable`, "retry shortly"), and the reason (a
 * refused connection, a URL pg cannot read) is its cause.
 */
export function postgresReason(error: unknown): string {
  const said = isChannelError(error) && error.code === "state_unavailable" ? error.cause : error;
  return postgresErrorMessage(said ?? error);
}

/**
 * SQLSTATE classes (and codes) of errors a statement meets before its commit, which end its
 * transaction: a feature not supported, such as a named statement's plan whose result changed
 * type under a migration (0A), data (22), constraints (23), transaction state, read-only included
 * (25), a named statement the session does not hold (26), rollback for serialization or deadlock
 * (40), syntax and access (42), limits (54), lock not available and the like (55), a canceled
 * statement (57014: the time limit is off during the commit).
 */
const ROLLED_BACK = /^(0A|22|23|25|26|40|42|54|55)|^57014$/;

/**
 * False when `error` (or its cause) is the server's answer that the statement failed before its
 * commit (see {@link ROLLED_BACK}), by SQLSTATE, which unlike the severity's text is not
 * translated. True otherwise: no answer came (a time limit, a broken connection), the session
 * was ended (class 57), the connection failed (08, which a pooler may send for a server it lost
 * at any moment), or the server failed (53, 58, XX); a commit may lie behind any of these.
 */
export function mayHaveCommitted(error: unknown): boolean {
  let at = error;
  for (let depth = 0; at instanceof Error && depth < 4; depth += 1) {
    const code = sqlState(at);
    if (code !== undefined && ROLLED_BACK.test(code)) return false;
    at = at.cause;
  }
  return true;
}

/**
 * The SQLSTATE of an error the server answered with (pg's `DatabaseError`, which carries a
 * severity too); undefined for any other failure, a socket's error code included.
 */
export function sqlState(error: unknown): string | undefined {
  if (!(error instanceof Error) || !("severity" in error) || !("code" in error)) return undefined;
  return typeof error.code === "string" ? error.code : undefined;
}
