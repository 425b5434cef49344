import type { Brain } from "../brain/brain.js";
import type { Clock, IdGenerator } from "../clock/clock.js";
import type { Config } from "../config/config-schema.js";
import { type KeyMapping, resolveMapping } from "../config/message-fields.js";
import { channelName } from "../config/validate-config.js";
import { type ConversationStore, type ConversationTurn, conversationKey } from "../conversation/conversation-store.js";
import { baseReplyHeaders, deliverReply } from "../delivery/deliver-reply.js";
import type { Poster } from "../delivery/poster.js";
import { ChannelError, errorMessage, isChannelError } from "../errors/channel-error.js";
import type { Logger } from "../log/logger.js";
import type { QueuedMessage } from "../message/inbound-message.js";
import { type BrainReply, type OutboundReply, renderReplyBody } from "../message/outbound-reply.js";

/** What the consumer is built from. */
export interface ConsumerDeps {
  readonly config: Config;
  readonly brains: ReadonlyMap<string, Brain>;
  readonly poster: Poster;
  readonly store: ConversationStore;
  readonly clock: Clock;
  readonly newId: IdGenerator;
  readonly logger: Logger;
}

/** Takes accepted messages off a queue and answers them. */
export interface Consumer {
  /**
   * Asks the routed brain and delivers each reply in order. Rejects with a ChannelError
   * (`brain_failed` or `delivery_failed`) whose `retryable` tells the queue what to do.
   */
  process(queued: QueuedMessage): Promise<void>;
}

interface Lane {
  readonly brain: Brain;
  readonly keys: KeyMapping;
  readonly url: string;
  readonly timeoutMs: number;
  readonly headers: Readonly<Record<string, string>>;
}

/** Builds the consumer. Per-channel work (routing, headers, mapping) is resolved once here. */
export function createConsumer(deps: ConsumerDeps): Consumer {
  const { clock, logger, newId, poster, store } = deps;
  const lanes = new Map<string, Lane>();
  for (const channel of deps.config.channels) {
    const name = channelName(channel);
    const route = deps.config.routes.find((candidate) => candidate.channel === name);
    const brain = route === undefined ? undefined : deps.brains.get(route.brain);
    if (brain === undefined) throw new ChannelError("config_invalid", `channel "${name}" has no usable route`);
    lanes.set(name, {
      brain,
      keys: resolveMapping(channel.webhook.mapping),
      url: channel.webhook.outbound_url,
      timeoutMs: channel.webhook.delivery.timeout_ms,
      headers: baseReplyHeaders(),
    });
  }

  const ask = async (lane: Lane, queued: QueuedMessage): Promise<readonly BrainReply[]> => {
    const { brain } = lane;
    const key = conversationKey(queued.channel, queued.message.conversationId);
    const history = brain.historyLimit > 0 ? await store.history(key, brain.historyLimit) : [];
    let replies: readonly BrainReply[];
    try {
      replies = await brain.reply({ message: queued.message, history });
    } catch (error) {
      if (isChannelError(error)) throw error;
      throw new ChannelError("brain_failed", `brain "${brain.name}" failed: ${errorMessage(error)}`, {
        retryable: true,
        cause: error,
      });
    }
    if (brain.historyLimit > 0) {
      const at = clock.now();
      const turns: ConversationTurn[] = [toTurn("user", queued.message, queued.receivedAt)];
      for (const reply of replies) turns.push(toTurn("assistant", reply, at));
      await store.append(key, turns);
    }
    return replies;
  };

  return {
    async process(queued) {
      const lane = lanes.get(queued.channel);
      if (lane === undefined) {
        throw new ChannelError("config_invalid", `no channel named "${queued.channel}" is configured`, {
          retryable: false,
        });
      }
      const replies = await ask(lane, queued);
      const createdAt = clock.now();
      for (const reply of replies) {
        const outbound: OutboundReply = {
          ...reply,
          id: newId(),
          inReplyTo: queued.id,
          conversationId: queued.message.conversationId,
          recipientId: queued.message.senderId,
          brain: lane.brain.name,
          createdAt,
        };
        await deliverReply(poster, {
          url: lane.url,
          replyId: outbound.id,
          body: renderReplyBody(outbound, lane.keys),
          headers: lane.headers,
          timeoutMs: lane.timeoutMs,
        });
        if (logger.enabled("debug")) {
          logger.debug("reply delivered", { message_id: outbound.id, in_reply_to: queued.id, text: outbound.text });
        }
      }
    },
  };
}

function toTurn(role: ConversationTurn["role"], content: BrainReply, at: number): ConversationTurn {
  const turn: { -readonly [K in keyof ConversationTurn]: ConversationTurn[K] } = { role, at };
  if (content.text !== undefined) turn.text = content.text;
  if (content.mediaUrl !== undefined) turn.mediaUrl = content.mediaUrl;
  if (content.mediaType !== undefined) turn.mediaType = content.mediaType;
  return turn;
}
