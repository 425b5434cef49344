import { systemClock } from "../clock.js";
import { RASA_REST_PATH, type RasaBrainConfig } from "../config/brain-schema.js";
import { isHttpUrl } from "../http/http-url.js";
import { isRecord } from "../is-record.js";
import type { BrainReply } from "../message/outbound-reply.js";
import type { Brain, BrainRequest } from "./brain.js";
import type { BrainDeps } from "./brain-deps.js";
import { type BrainEndpoint, jsonRequestHeaders, malformedAnswer, postJson } from "./brain-endpoint.js";

/** The body of a message to Rasa's REST input channel. */
export interface RasaRequestBody {
  /** Rasa's conversation key: our conversation id, so Rasa's tracker follows the conversation. */
  readonly sender: string;
  readonly message: string;
  readonly metadata: Readonly<Record<string, string>>;
}

/** The REST channel URL of a Rasa server: `url` is the server base, unless it already names the channel. */
export function rasaWebhookUrl(url: string): string {
  const parsed = new URL(url);
  const path = parsed.pathname.replace(/\/+$/, "");
  parsed.pathname = path.endsWith(RASA_REST_PATH) ? path : `${path}${RASA_REST_PATH}`;
  return parsed.href;
}

/**
 * A brain on a Rasa server's REST channel. Rasa keeps its own tracker per `sender`, so the
 * conversation id is sent as `sender` and no history is stored or sent (historyLimit 0).
 * Each `{ text, image }` of Rasa's answer becomes one reply; entries with neither (custom
 * payloads) are left out.
 */
export function createRasaBrain(name: string, config: RasaBrainConfig, deps: BrainDeps): Brain {
  const endpoint: BrainEndpoint = {
    brain: name,
    peer: "the Rasa server",
    url: rasaWebhookUrl(config.url),
    timeoutMs: config.timeout_ms,
    headers: jsonRequestHeaders(undefined),
    secrets: [],
    fetch: deps.fetch,
    clock: deps.clock ?? systemClock,
    hint: (status) =>
      status === 404
        ? 'is the REST channel enabled ("rest:" in credentials.yml) and "url" the server base?'
        : undefined,
  };

  return {
    name,
    historyLimit: 0,
    async reply(request: BrainRequest): Promise<readonly BrainReply[]> {
      const answer = await postJson(endpoint, rasaRequestBody(request), request.trace);
      const parsed = parseRasaAnswer(answer.body);
      if ("problem" in parsed) throw malformedAnswer(endpoint, parsed.problem);
      return parsed.replies;
    },
  };
}

/**
 * Builds the REST channel body. A message with only media sends its URL as the text, as
 * Rasa's own connectors do with attachments; the media also travel in `metadata`.
 */
export function rasaRequestBody(request: BrainRequest): RasaRequestBody {
  const { message } = request;
  const metadata: Record<string, string> = { sender_id: message.senderId, conversation_id: message.conversationId };
  if (message.senderName !== undefined) metadata.sender_name = message.senderName;
  if (message.mediaUrl !== undefined) metadata.media_url = message.mediaUrl;
  if (message.mediaType !== undefined) metadata.media_type = message.mediaType;
  if (request.messageId !== undefined) metadata.message_id = request.messageId;
  if (request.channel !== undefined) metadata.channel = request.channel;
  const text = message.text !== undefined && message.text.trim() !== "" ? message.text : undefined;
  return { sender: message.conversationId, message: text ?? message.mediaUrl ?? "", metadata };
}

/** Reads the REST channel's answer: an array of `{ recipient_id, text?, image?, ... }`. */
export function parseRasaAnswer(body: unknown): { readonly replies: BrainReply[] } | { readonly problem: string } {
  if (body === undefined) return { replies: [] };
  if (!Array.isArray(body)) return { problem: "expected a JSON array of bot messages" };
  const replies: BrainReply[] = [];
  for (const [index, item] of body.entries()) {
    if (!isRecord(item)) return { problem: `[${index}] is not an object` };
    const reply: { text?: string; mediaUrl?: string } = {};
    if (item.text !== undefined && item.text !== null) {
      if (typeof item.text !== "string") return { problem: `[${index}].text is not a string` };
      if (item.text.trim() !== "") reply.text = item.text;
    }
    if (item.image !== undefined && item.image !== null) {
      if (typeof item.image !== "string" || !isHttpUrl(item.image)) {
        return { problem: `[${index}].image is not an absolute http: or https: URL` };
      }
      reply.mediaUrl = item.image;
    }
    if (reply.text !== undefined || reply.mediaUrl !== undefined) replies.push(reply);
  }
  return { replies };
}
