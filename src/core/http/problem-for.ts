import { ChannelError, errorMessage, isChannelError } from "../channel-error.js";
import type { Logger } from "../log/logger.js";

/**
 * The problem to answer for anything a request handler threw, logged once here for every
 * server: a refusal (a ChannelError) at debug level with its code, anything else at error
 * level as a 500 that names no detail to the client; both with the `channel` whose path was
 * asked for, when there is one.
 */
export function problemFor(error: unknown, logger: Logger, channel?: string): ChannelError {
  const where = channel === undefined ? {} : { channel };
  if (isChannelError(error)) {
    if (logger.enabled("debug")) logger.debug("request rejected", { ...where, code: error.code, status: error.status });
    return error;
  }
  logger.error("unexpected error while handling a request", { ...where, error: errorMessage(error) });
  return new ChannelError("internal_error", "An unexpected error occurred.", { status: 500 });
}
