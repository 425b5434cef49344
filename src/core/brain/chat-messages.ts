import { isRecord } from "../is-record.js";
import type { BrainReply } from "../message/outbound-reply.js";
import { alternatingRoles } from "./alternating-roles.js";
import type { BrainRequest } from "./brain.js";
import type { ChatContentPart, ChatMessage } from "./chat-message.js";
import { estimateMessageTokens, newestWithinTokens } from "./estimate-tokens.js";

/** How a brain's prompt is built. */
export interface ChatPromptOptions {
  readonly systemPrompt?: string | undefined;
  /** Earlier turns sent at most; the newest are kept. */
  readonly maxHistory: number;
  /**
   * Estimated tokens the earlier turns may take at most (`max_history_tokens`), counted as
   * sent (see {@link chatMessageTokens}); the oldest are dropped first. Neither the system
   * prompt nor the new message counts: they are sent whatever the bound.
   */
  readonly maxHistoryTokens?: number | undefined;
  /** True: a user's image goes as an `image_url` part; false: every medium is described in text. */
  readonly imageParts: boolean;
}

const IMAGE_EXTENSION = /\.(png|jpe?g|gif|webp)$/i;

/**
 * True when a medium is an image: by its media type when there is one (`image/*`), else by
 * the extension of the URL's path.
 */
export function isImage(mediaUrl: string, mediaType: string | undefined): boolean {
  if (mediaType !== undefined) return /^\s*image\//i.test(mediaType);
  const path = URL.canParse(mediaUrl) ? new URL(mediaUrl).pathname : mediaUrl;
  return IMAGE_EXTENSION.test(path);
}

/**
 * The messages of one request: the system prompt, the conversation's earlier turns (oldest
 * first, at most `maxHistory`, and within `maxHistoryTokens` when set), then the new message.
 * Turns with nothing to say are left out, and the turns sent alternate user and assistant
 * from a user turn to the new message (see {@link alternatingRoles}); the stored history is
 * not changed.
 */
export function buildChatMessages(request: BrainRequest, options: ChatPromptOptions): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (options.systemPrompt !== undefined) messages.push({ role: "system", content: options.systemPrompt });
  // The consumer already loads no more than historyLimit turns; slicing again keeps the
  // bound true for any caller.
  const history = options.maxHistory > 0 ? request.history.slice(-options.maxHistory) : [];
  const earlier: ChatMessage[] = [];
  for (const turn of history) {
    const message = chatMessage(turn.role, turn, options.imageParts);
    if (message !== undefined) earlier.push(message);
  }
  // Bounded before the roles are made to alternate: a merged message costs less than the
  // messages it joins (one overhead fewer), and a dropped one nothing, so the bound still holds.
  const bounded = newestWithinTokens(earlier, options.maxHistoryTokens, chatMessageTokens);
  messages.push(...alternatingRoles(bounded, chatMessage("user", request.message, options.imageParts)));
  return messages;
}

function chatMessage(role: "user" | "assistant", content: BrainReply, imageParts: boolean): ChatMessage | undefined {
  const text = content.text !== undefined && content.text.trim() !== "" ? content.text : undefined;
  const { mediaUrl, mediaType } = content;
  if (mediaUrl === undefined) return text === undefined ? undefined : { role, content: text };
  // Chat Completions accepts image parts only in user messages.
  if (imageParts && role === "user" && isImage(mediaUrl, mediaType)) {
    const parts: ChatContentPart[] = [];
    if (text !== undefined) parts.push({ type: "text", text });
    parts.push({ type: "image_url", image_url: { url: mediaUrl } });
    return { role, content: parts };
  }
  const description = describeMedia(mediaUrl, mediaType);
  return { role, content: text === undefined ? description : `${text}\n\n${description}` };
}

/**
 * The estimated tokens of a chat message as sent (`estimateMessageTokens`): its text, a
 * described medium included. An image part counts as its URL only: what a model charges for
 * the picture depends on its size and the model, neither of which the service knows.
 */
export function chatMessageTokens(message: ChatMessage): number {
  const { content } = message;
  if (typeof content === "string") return estimateMessageTokens([content]);
  return estimateMessageTokens(content.map((part) => (part.type === "text" ? part.text : part.image_url.url)));
}

/** A medium the model cannot be shown, described so that it at least knows it was there. */
export function describeMedia(mediaUrl: string, mediaType: string | undefined): string {
  if (isImage(mediaUrl, mediaType)) return `[image: ${mediaUrl}]`;
  return `[attachment${mediaType === undefined ? "" : ` (${mediaType})`}: ${mediaUrl}]`;
}

/**
 * The reply text of a Chat Completions answer: `choices[0].message.content` as a string or
 * as text parts; a refusal when there is no content. Returns a problem description for an
 * answer of another shape.
 */
export function chatCompletionText(body: unknown): { readonly text: string } | { readonly problem: string } {
  if (!isRecord(body)) return { problem: 'expected a JSON object with "choices"' };
  const { choices } = body;
  if (!Array.isArray(choices))
    return { problem: 'expected a "choices" array (is base_url the API root, e.g. ending in /v1?)' };
  const first: unknown = choices[0];
  if (first === undefined) return { problem: '"choices" is empty' };
  if (!isRecord(first) || !isRecord(first.message)) return { problem: '"choices[0].message" is not an object' };
  const { content, refusal } = first.message;
  if (typeof content === "string") return { text: content };
  if (content === null || content === undefined) return { text: typeof refusal === "string" ? refusal : "" };
  if (Array.isArray(content)) {
    // Only text parts can be delivered; other parts (audio, ...) are left out.
    const texts = content.flatMap((part: unknown) =>
      isRecord(part) && (part.type === "text" || part.type === "output_text") && typeof part.text === "string"
        ? [part.text]
        : [],
    );
    return { text: texts.join("") };
  }
  return { problem: '"choices[0].message.content" is neither a string nor a list of parts' };
}

/** The replies of a model's text: none when it said nothing. */
export function textReplies(text: string): readonly BrainReply[] {
  const trimmed = text.trim();
  return trimmed === "" ? [] : [{ text: trimmed }];
}
