import type { BrainCall } from "../brain/brain.js";
import type { TokenUsage } from "../brain/token-usage.js";
import { ChannelError, errorMessage, isChannelError } from "../channel-error.js";
import type { Clock, IdGenerator } from "../clock.js";
import { type ConversationStore, type ConversationTurn, conversationKey } from "../conversation/conversation-store.js";
import { type TraceContext, traceHeaders } from "../http/trace-context.js";
import type { Job, PendingReply } from "../lifecycle/job.js";
import type { InboundMessage, QueuedMessage } from "../message/inbound-message.js";
import { type BrainReply, renderReplyBody, renumberReplyBody } from "../message/outbound-reply.js";
import type { Mutable } from "../mutable.js";
import { deliverReply } from "../outbound/deliver-reply.js";
import type { Poster } from "../outbound/poster.js";
import type { ChannelRoute } from "./channel-routes.js";

/** What asking the brain and posting replies need. */
export interface AnswerDeps {
  readonly poster: Poster;
  /** Conversation memory, read for the brain's history (the lane store keeps the new turns). */
  readonly store: ConversationStore;
  readonly clock: Clock;
  readonly newId: IdGenerator;
}

/** What a brain step produced: replies rendered once, and the turns the conversation memory keeps. */
export interface Produced {
  readonly replies: PendingReply[];
  /** The message and the replies as turns; empty when the brain is given no history. */
  readonly turns: ConversationTurn[];
}

/**
 * The two steps of answering a message: asking the brain (with the conversation's history)
 * for replies rendered once, and posting one reply. The job state machine decides when each
 * runs; these only do the work, and throw a ChannelError when it fails.
 */
export interface AnswerSteps {
  /**
   * Asks the route's brain and renders its replies, numbered from `firstSequence` (the lane's
   * next number: nothing is reserved, the write that stores them moves the lane's last number),
   * each naming the brain that answered (a fallback's name when the route's brain has a chain);
   * `onCall` hears of each call the chain made, `onUsage` of the tokens each call reported,
   * under the brain that made it.
   */
  produce(
    route: ChannelRoute,
    queued: QueuedMessage,
    firstSequence: number,
    onCall?: (call: BrainCall) => void,
    onUsage?: (brain: string, usage: TokenUsage) => void,
  ): Promise<Produced>;
  /**
   * Gives a replayed job's undelivered replies the conversation's next `sequence` numbers, from
   * `firstSequence` (see `replayableJob`); the job comes back without the mark.
   */
  renumber(job: Job, firstSequence: number): Job;
  /**
   * Posts one reply and resolves with the receiver's 2xx status; `trace` (the message's) gives
   * the POST a `traceparent` with a new span id.
   */
  post(route: ChannelRoute, reply: PendingReply, trace?: TraceContext): Promise<number>;
}

/** Builds the steps of answering a message. */
export function createAnswerSteps(deps: AnswerDeps): AnswerSteps {
  const { clock, newId, poster, store } = deps;
  return {
    async produce(route, queued, firstSequence, onCall, onUsage) {
      const { brain } = route;
      const key = conversationKey(queued.channel, queued.message.conversationId);
      const history = brain.historyLimit > 0 ? await store.history(key, brain.historyLimit) : [];
      let replies: readonly BrainReply[];
      // A chain reports which of its brains answered; any other brain answered itself.
      let answeredBy = brain.name;
      try {
        replies = await brain.reply({
          message: queued.message,
          history,
          messageId: queued.id,
          channel: queued.channel,
          ...(queued.trace === undefined ? {} : { trace: queued.trace }),
          onCall: (call) => {
            if (call.error === undefined) answeredBy = call.brain;
            onCall?.(call);
          },
          ...(onUsage === undefined ? {} : { onUsage }),
        });
      } catch (error) {
        if (isChannelError(error)) throw error;
        throw new ChannelError("brain_failed", `brain "${brain.name}" failed: ${errorMessage(error)}`, {
          retryable: true,
          brain: brain.name,
          cause: error,
        });
      }
      const createdAt = clock.now();
      const turns: ConversationTurn[] = [];
      if (brain.historyLimit > 0) {
        turns.push(toTurn("user", queued.message, queued.receivedAt));
        for (const reply of replies) turns.push(toTurn("assistant", reply, createdAt));
      }
      const rendered = replies.map((reply, index) => {
        const id = newId();
        const sequence = firstSequence + index;
        const envelope = {
          id,
          inReplyTo: queued.id,
          conversationId: queued.message.conversationId,
          recipientId: queued.message.senderId,
          brain: answeredBy,
          createdAt,
          sequence,
        };
        return { id, sequence, body: renderReplyBody(reply, envelope, route.keys) };
      });
      return { replies: rendered, turns };
    },

    renumber(job, first) {
      const { renumber: _renumber, ...rest } = job;
      const replies = job.replies ?? [];
      const left = replies.length - job.delivered;
      if (left <= 0) return rest;
      return {
        ...rest,
        replies: replies.map((reply, index) => {
          if (index < job.delivered) return reply;
          const sequence = first + index - job.delivered;
          return { ...reply, sequence, body: renumberReplyBody(reply.body, sequence) };
        }),
      };
    },

    async post(route, reply, trace) {
      const timestamp = Math.floor(clock.now() / 1000);
      const headers: Record<string, string> = {
        ...route.headers,
        ...traceHeaders(trace),
        "webhook-id": reply.id,
        "webhook-timestamp": String(timestamp),
      };
      if (route.signer !== undefined) {
        headers["webhook-signature"] = await route.signer.sign(reply.id, timestamp, reply.body);
      }
      return await deliverReply(
        poster,
        { url: route.url, body: reply.body, headers, timeoutMs: route.timeoutMs, tls: route.tls },
        clock,
      );
    },
  };
}

function toTurn(role: ConversationTurn["role"], content: BrainReply | InboundMessage, at: number): ConversationTurn {
  const turn: Mutable<ConversationTurn> = { role, at };
  if (content.text !== undefined) turn.text = content.text;
  if (content.mediaUrl !== undefined) turn.mediaUrl = content.mediaUrl;
  if (content.mediaType !== undefined) turn.mediaType = content.mediaType;
  return turn;
}
