import type { SpanFields } from "./telemetry.js";

/**
 * The service's own attributes, under one namespace so they never clash with the semantic
 * conventions'. docs/telemetry.md lists them; renaming one breaks operators' queries.
 */
export const SPAN_ATTRIBUTES = {
  channel: "webhook_channel.channel",
  messageId: "webhook_channel.message_id",
  conversationId: "webhook_channel.conversation_id",
  brain: "webhook_channel.brain",
  replyId: "webhook_channel.reply_id",
  replySequence: "webhook_channel.reply_sequence",
  attempt: "webhook_channel.attempt",
  replies: "webhook_channel.replies",
  errorCode: "webhook_channel.error_code",
} as const;

/** The semantic conventions' attribute names, handed in by whoever loaded the package. */
export interface ConventionKeys {
  readonly errorType: string;
  readonly httpMethod: string;
  readonly httpRoute: string;
  readonly httpStatus: string;
  readonly url: string;
}

/**
 * The span attributes of `fields`; an error code is also the conventions' `error.type`, which
 * tools group failures by.
 */
export function attributesOf(fields: SpanFields, keys: ConventionKeys): Record<string, string | number> {
  const attributes: Record<string, string | number> = {};
  const put = (key: string, value: string | number | undefined): void => {
    if (value !== undefined) attributes[key] = value;
  };
  put(SPAN_ATTRIBUTES.channel, fields.channel);
  put(SPAN_ATTRIBUTES.messageId, fields.messageId);
  put(SPAN_ATTRIBUTES.conversationId, fields.conversationId);
  put(SPAN_ATTRIBUTES.brain, fields.brain);
  put(SPAN_ATTRIBUTES.replyId, fields.replyId);
  put(SPAN_ATTRIBUTES.replySequence, fields.replySequence);
  put(SPAN_ATTRIBUTES.attempt, fields.attempt);
  put(SPAN_ATTRIBUTES.replies, fields.replies);
  put(SPAN_ATTRIBUTES.errorCode, fields.errorCode);
  put(keys.errorType, fields.errorCode);
  put(keys.httpMethod, fields.httpMethod);
  put(keys.httpRoute, fields.httpRoute);
  put(keys.httpStatus, fields.httpStatus);
  put(keys.url, fields.url);
  return attributes;
}
