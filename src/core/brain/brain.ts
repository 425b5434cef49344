import type { ChannelError } from "../channel-error.js";
import type { ConversationTurn } from "../conversation/conversation-store.js";
import type { TraceContext } from "../http/trace-context.js";
import type { InboundMessage } from "../message/inbound-message.js";
import type { BrainReply } from "../message/outbound-reply.js";
import type { TokenUsage } from "./token-usage.js";

/** What a brain is asked: the new message and the conversation so far (oldest first). */
export interface BrainRequest {
  readonly message: InboundMessage;
  readonly history: readonly ConversationTurn[];
  /**
   * The inbound `message_id`. It is the same on every retry of one message, so a bot behind
   * the `http` brain can use it to recognise a repeated call.
   */
  readonly messageId?: string;
  /** Name of the channel the message came in on. */
  readonly channel?: string;
  /** The message's W3C trace; an HTTP brain's request carries it as `traceparent` with a new span id. */
  readonly trace?: TraceContext;
  /**
   * Told of each call a fallback chain makes to one of its brains, as the call ends, so that the
   * consumer can name the brain that answered, log the ones that failed and time each. A brain
   * that asks no other brain never calls it.
   */
  readonly onCall?: (call: BrainCall) => void;
  /**
   * Told of the tokens a call used, when the brain's server reported them (`usage`), with the
   * name of the brain that made the call: each brain names itself, so in a fallback chain the
   * tokens of every brain asked are counted under that brain, not the routed one. A 2xx answer
   * carrying usage reports it even when the answer turns out unusable: the tokens were spent.
   * Brains whose servers report none (echo, rasa) never call it.
   */
  readonly onUsage?: (brain: string, usage: TokenUsage) => void;
}

/** One call a fallback chain made to one of its brains. */
export interface BrainCall {
  /** The brain asked, by its name in the configuration. */
  readonly brain: string;
  /** Why it did not answer; absent when it answered. */
  readonly error?: ChannelError;
  /** How long the call took. */
  readonly seconds: number;
}

/**
 * Something that answers messages: an LLM, a bot, or the built-in echo. It may answer with
 * no reply, one, or several (delivered in order). A failure is thrown as a ChannelError
 * whose `retryable` says whether asking again may help.
 */
export interface Brain {
  readonly name: string;
  /** Earlier turns the brain wants to see; 0 for a stateless brain, whose turns are not stored. */
  readonly historyLimit: number;
  reply(request: BrainRequest): Promise<readonly BrainReply[]>;
}
