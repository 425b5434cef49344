import { ChannelError, errorMessage, isChannelError } from "../channel-error.js";
import type { Clock } from "../clock.js";
import { fallbackNames } from "../config/brain-schema.js";
import type { BrainConfig } from "../config/config-schema.js";
import type { ConversationTurn } from "../conversation/conversation-store.js";
import type { BrainReply } from "../message/outbound-reply.js";
import type { Brain, BrainRequest } from "./brain.js";

/**
 * The brains a call to `name` may reach, in the order they are asked: `name`, then each of its
 * `fallback` brains followed by their own fallbacks, depth first, each brain once. A brain
 * listed twice on the way is asked once, where it first comes, so a chain never calls one
 * brain twice for a message; a cycle (which `validateConfig` refuses) would end here too.
 */
export function fallbackChain(name: string, definitions: Readonly<Record<string, BrainConfig>>): string[] {
  const chain: string[] = [];
  const visit = (current: string): void => {
    if (chain.includes(current)) return;
    chain.push(current);
    // hasOwn: a brain named like an Object.prototype key must not read the prototype.
    const definition = Object.hasOwn(definitions, current) ? definitions[current] : undefined;
    if (definition !== undefined) for (const next of fallbackNames(definition)) visit(next);
  };
  visit(name);
  return chain;
}

/**
 * A brain that asks `primary` and, when that call fails in a way that would be retried (a
 * retryable ChannelError: timeout, network error, 408, 429, 5xx), asks each of `fallbacks` at
 * once, in order, until one answers. Each brain of the chain is asked with its own history
 * limit, system prompt and timeout; the chain's `historyLimit` is the largest of them, so the
 * consumer loads (and stores) one history that every brain reads its part of.
 *
 * A non-retryable failure of the primary (a 400, 401, 404, a malformed answer) is thrown at
 * once: it says the message or the configuration is wrong, which an operator must see rather
 * than have a fallback quietly answer every message. Any failure of a fallback moves on to the
 * next one. When every brain failed, the primary's error is thrown: the message's fate stays
 * the routed brain's (its `Retry-After` decides the retry's delay, a broken fallback never
 * dead-letters a message), and the retry asks the primary again first.
 *
 * Every call, failed or not, is reported through the request's `onCall`. The request's
 * `onUsage` goes to each brain asked as it is: a brain reports its tokens under its own name,
 * so a fallback's tokens are counted for the fallback, not for the routed brain.
 */
export function createFallbackBrain(primary: Brain, fallbacks: readonly Brain[], clock: Clock): Brain {
  const chain = [primary, ...fallbacks];
  return {
    name: primary.name,
    historyLimit: Math.max(...chain.map((brain) => brain.historyLimit)),
    async reply(request: BrainRequest): Promise<readonly BrainReply[]> {
      const { onCall, ...asked } = request;
      let first: ChannelError | undefined;
      for (const brain of chain) {
        const startedAt = clock.now();
        try {
          const replies = await brain.reply({ ...asked, history: ownHistory(request.history, brain.historyLimit) });
          onCall?.({ brain: brain.name, seconds: (clock.now() - startedAt) / 1000 });
          return replies;
        } catch (thrown) {
          const error = asBrainError(thrown, brain.name);
          onCall?.({ brain: brain.name, error, seconds: (clock.now() - startedAt) / 1000 });
          if (first === undefined) {
            if (!error.retryable) throw error;
            first = error;
          }
        }
      }
      // The loop asked the primary, so `first` is set; the fallback keeps the compiler sure.
      throw first ?? new ChannelError("brain_failed", `brain "${primary.name}" failed`, { retryable: true });
    },
  };
}

/** The part of the chain's history a brain wants: its own last `limit` turns, none for 0. */
function ownHistory(history: readonly ConversationTurn[], limit: number): readonly ConversationTurn[] {
  if (limit <= 0) return [];
  return history.length <= limit ? history : history.slice(-limit);
}

/** A thrown value as a brain's ChannelError; anything else is retryable, as the consumer treats it. */
function asBrainError(thrown: unknown, brain: string): ChannelError {
  if (isChannelError(thrown)) return thrown;
  return new ChannelError("brain_failed", `brain "${brain}" failed: ${errorMessage(thrown)}`, {
    retryable: true,
    brain,
    cause: thrown,
  });
}
