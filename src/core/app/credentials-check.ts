import type { AuthFailureBlock, AuthFailureLimit, AuthFailureLimiter } from "../auth-limit/auth-failure-limiter.js";
import type { MemoryAuthFailureLimiter } from "../auth-limit/memory-auth-failure-limiter.js";
import { errorMessage } from "../channel-error.js";
import {
  bearerMatches,
  checkContentEncoding,
  checkJsonContentType,
  unauthorizedError,
} from "../http/request-checks.js";
import type { RequestHead } from "../http/request-head.js";
import type { Logger } from "../log/logger.js";
import { tooManyFailuresError } from "./refusals.js";

/** What a channel's credentials check is built from. */
export interface CredentialsCheckDeps {
  readonly channel: string;
  readonly limit: AuthFailureLimit;
  /** The channel's inbound secrets (two while rotating), asked on every request so a reload applies at once. */
  readonly secrets: () => readonly string[];
  /** Counts failed authentications per client address, and refuses addresses over the limit. */
  readonly authFailures: AuthFailureLimiter;
  /**
   * The process's own count, in front of an `authFailures` shared by replicas or isolates, whose
   * answers come later: checked, compared and counted in one turn, so that guesses sent at once
   * cannot all be compared before any is counted. Absent when `authFailures` is the process's own.
   */
  readonly localAuthFailures?: MemoryAuthFailureLimiter | undefined;
  readonly logger: Logger;
}

/**
 * Checks 1 and 2 of a request's head: an address over the auth-failure limit is refused (429)
 * before its secret is compared, a wrong secret is counted and refused (401), then the media
 * type and content coding are checked. Synchronous (undefined, or a throw) when the limiters
 * are; else a promise.
 */
export function createCredentialsCheck(deps: CredentialsCheckDeps): (head: RequestHead) => Promise<void> | undefined {
  const { channel, limit, authFailures, localAuthFailures, logger } = deps;

  /** The refusal of an address over the limit, logged once per window. */
  const refuse = (address: string, block: AuthFailureBlock): never => {
    if (block.first) {
      logger.warn("too many failed authentications: requests from this address are refused", {
        channel,
        address,
        retry_after_s: block.retryAfterSeconds,
      });
    }
    throw tooManyFailuresError(block.retryAfterSeconds);
  };

  /** The secret's comparison; a wrong one is counted by the process's own count at once. */
  const compare = (head: RequestHead): boolean => {
    const matches = bearerMatches(head.authorization, deps.secrets());
    const address = head.clientAddress;
    if (!matches && address !== null) localAuthFailures?.recordFailure(channel, address, limit);
    return matches;
  };

  /** Once the address is known not to be refused; `matches` when compared already. */
  const checkCredentials = (head: RequestHead, matches: boolean = compare(head)): Promise<void> | undefined => {
    if (!matches) {
      const address = head.clientAddress;
      const counted = address === null ? undefined : authFailures.recordFailure(channel, address, limit);
      if (counted === undefined) throw unauthorizedError();
      // The 401 waits for the count, so a client cannot outrun it with its next guess.
      return counted.then(
        () => {
          throw unauthorizedError();
        },
        (error: unknown) => {
          logger.error("cannot count a failed authentication", { channel, error: errorMessage(error) });
          throw unauthorizedError();
        },
      );
    }
    checkJsonContentType(head.contentType);
    checkContentEncoding(head.contentEncoding);
    return undefined;
  };

  return (head) => {
    const address = head.clientAddress;
    if (address === null) return checkCredentials(head);
    const refused = localAuthFailures?.check(channel, address, limit);
    if (refused !== undefined) return refuse(address, refused);
    const block = authFailures.check(channel, address, limit);
    if (block === undefined) return checkCredentials(head);
    if (!(block instanceof Promise)) return refuse(address, block);
    // Compared in this turn, not when the shared count answers (see `localAuthFailures`).
    const matches = compare(head);
    return block.then(
      (settled) => (settled === undefined ? checkCredentials(head, matches) : refuse(address, settled)),
      (error: unknown) => {
        // A limiter that cannot answer must not take the endpoint down; the secret is still checked.
        logger.error("cannot check the auth-failure limit; the request is checked without it", {
          channel,
          error: errorMessage(error),
        });
        return checkCredentials(head, matches);
      },
    );
  };
}
