/** The fields of an inbound message, by their default JSON key. */
export const MESSAGE_FIELDS = [
  "sender_id",
  "sender_name",
  "text",
  "media_url",
  "media_type",
  "conversation_id",
] as const;

/** One field of an inbound message. */
export type MessageField = (typeof MESSAGE_FIELDS)[number];

/** Field → the JSON key the client uses for it (every field present, defaults filled in). */
export type KeyMapping = Readonly<Record<MessageField, string>>;

/** Keys of the outbound reply that `webhook.mapping` never renames. */
export const FIXED_REPLY_KEYS = [
  "message_id",
  "in_reply_to",
  "recipient_id",
  "brain",
  "created_at",
  "sequence",
] as const;

/** Fills in the default key for every field that the mapping does not rename. */
export function resolveMapping(mapping: { readonly [F in MessageField]?: string | undefined } | undefined): KeyMapping {
  const resolved = {} as Record<MessageField, string>;
  for (const field of MESSAGE_FIELDS) resolved[field] = mapping?.[field] ?? field;
  return resolved;
}
