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
    if (error.message !== "") return error.message;
    const code = "code" in error ? error.code : undefined;
    return typeof code === "string" ? code : error.name;
  }
  return String(error);
}
