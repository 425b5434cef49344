import { systemClock } from "../clock.js";
import type { HttpBrainConfig } from "../config/brain-schema.js";
import type { ConversationTurn } from "../conversation/conversation-store.js";
import { isHttpUrl } from "../http/http-url.js";
import { isRecord } from "../is-record.js";
import type { InboundMessage } from "../message/inbound-message.js";
import type { BrainReply } from "../message/outbound-reply.js";
import type { Brain, BrainRequest } from "./brain.js";
import { type BrainDeps, requireSecret } from "./brain-deps.js";
import { type BrainEndpoint, jsonRequestHeaders, malformedAnswer, postJson } from "./brain-endpoint.js";
import { estimateMessageTokens, newestWithinTokens } from "./estimate-tokens.js";
import { usageOf } from "./token-usage.js";

/** The JSON body POSTed to an `http` brain's `url` (documented in docs/brains.md). */
export interface HttpBrainRequestBody {
  readonly brain: string;
  // Absent fields may be undefined here: JSON leaves them out of the body all the same.
  readonly channel?: string | undefined;
  readonly message_id?: string | undefined;
  readonly conversation_id: string;
  readonly message: {
    readonly sender_id: string;
    readonly sender_name?: string | undefined;
    readonly text?: string | undefined;
    readonly media_url?: string | undefined;
    readonly media_type?: string | undefined;
    readonly conversation_id: string;
  };
  readonly history: readonly {
    readonly role: "user" | "assistant";
    readonly text?: string | undefined;
    readonly media_url?: string | undefined;
    readonly media_type?: string | undefined;
    /** ISO 8601 UTC. */
    readonly at: string;
  }[];
}

const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+$/;

/**
 * A brain that is the user's own bot: each message is POSTed with the conversation's last
 * `max_history` turns (within `max_history_tokens`), and the bot answers `{ "replies": [...] }`
 * or a single `{ "text" }`. An answer of another shape is a non-retryable error that says what
 * is wrong with it. A bot that calls a model may add `"usage": { "prompt_tokens",
 * "completion_tokens" }` to its answer; it is reported through the request's `onUsage`.
 */
export function createHttpBrain(name: string, config: HttpBrainConfig, deps: BrainDeps): Brain {
  const token =
    config.token_env === undefined ? undefined : requireSecret(deps.env, config.token_env, name, "token_env");
  const endpoint: BrainEndpoint = {
    brain: name,
    peer: "the bot",
    url: config.url,
    timeoutMs: config.timeout_ms,
    headers: jsonRequestHeaders(token),
    secrets: token === undefined ? [] : [token],
    fetch: deps.fetch,
    clock: deps.clock ?? systemClock,
    hint: (status) =>
      status === 401 || status === 403
        ? config.token_env === undefined
          ? "the bot wants a token: set token_env"
          : `check the token in ${config.token_env}`
        : undefined,
  };

  return {
    name,
    historyLimit: config.max_history,
    async reply(request: BrainRequest): Promise<readonly BrainReply[]> {
      const body = httpBrainRequestBody(name, request, config.max_history, config.max_history_tokens);
      const answer = await postJson(endpoint, body, request.trace);
      // Before the answer is judged, as for the model brains: what the bot spent, it spent.
      const usage = usageOf(answer.body);
      if (usage !== undefined) request.onUsage?.(name, usage);
      const parsed = parseBotAnswer(answer.body);
      if ("problem" in parsed) throw malformedAnswer(endpoint, parsed.problem);
      return parsed.replies;
    },
  };
}

/**
 * Builds the request body of an `http` brain: the last `maxHistory` turns, of which the newest
 * within `maxHistoryTokens` when it is set (each turn estimated from its `text`, `media_url`
 * and `media_type`, see `estimateMessageTokens`; the new message does not count).
 */
export function httpBrainRequestBody(
  brain: string,
  request: BrainRequest,
  maxHistory: number,
  maxHistoryTokens?: number,
): HttpBrainRequestBody {
  const history = maxHistory > 0 ? request.history.slice(-maxHistory).map(turnBody) : [];
  return {
    brain,
    channel: request.channel,
    message_id: request.messageId,
    conversation_id: request.message.conversationId,
    message: messageBody(request.message),
    history: newestWithinTokens(history, maxHistoryTokens, turnTokens),
  };
}

/** The estimated tokens of a history turn: what a bot would hand its model of it. */
function turnTokens(turn: HttpBrainRequestBody["history"][number]): number {
  return estimateMessageTokens([turn.text, turn.media_url, turn.media_type]);
}

function messageBody(message: InboundMessage): HttpBrainRequestBody["message"] {
  return {
    sender_id: message.senderId,
    sender_name: message.senderName,
    text: message.text,
    media_url: message.mediaUrl,
    media_type: message.mediaType,
    conversation_id: message.conversationId,
  };
}

function turnBody(turn: ConversationTurn): HttpBrainRequestBody["history"][number] {
  return {
    role: turn.role,
    text: turn.text,
    media_url: turn.mediaUrl,
    media_type: turn.mediaType,
    at: new Date(turn.at).toISOString(),
  };
}

/**
 * Reads a bot's answer. Accepted: `{ "replies": [reply, ...] }` (an empty list: no reply),
 * a single reply object, or an empty body / 204 (no reply). A reply has a non-blank `text`
 * and/or an absolute http(s) `media_url`, with an optional `media_type`; `null` counts as
 * absent and other keys are ignored.
 */
export function parseBotAnswer(body: unknown): { readonly replies: BrainReply[] } | { readonly problem: string } {
  if (body === undefined) return { replies: [] };
  if (!isRecord(body)) return { problem: `expected a JSON object with "replies" or "text", got ${kindOf(body)}` };
  if ("replies" in body && body.replies !== null) {
    if (!Array.isArray(body.replies)) return { problem: `"replies" must be an array, got ${kindOf(body.replies)}` };
    const replies: BrainReply[] = [];
    for (const [index, item] of body.replies.entries()) {
      const reply = parseReply(item, `replies[${index}]`);
      if ("problem" in reply) return reply;
      replies.push(reply.reply);
    }
    return { replies };
  }
  if (absent(body.text) && absent(body.media_url)) {
    return { problem: 'expected "replies" (an array of replies) or a single reply with "text" or "media_url"' };
  }
  const reply = parseReply(body, "");
  return "problem" in reply ? reply : { replies: [reply.reply] };
}

function parseReply(item: unknown, path: string): { reply: BrainReply } | { problem: string } {
  const at = (key: string) => (path === "" ? `"${key}"` : `"${path}.${key}"`);
  if (!isRecord(item)) return { problem: `"${path}" must be an object, got ${kindOf(item)}` };
  const { text, media_url: mediaUrl, media_type: mediaType } = item;
  const reply: { text?: string; mediaUrl?: string; mediaType?: string } = {};
  if (!absent(text)) {
    if (typeof text !== "string") return { problem: `${at("text")} must be a string, got ${kindOf(text)}` };
    if (text.trim() !== "") reply.text = text;
  }
  if (!absent(mediaUrl)) {
    if (typeof mediaUrl !== "string" || !isHttpUrl(mediaUrl)) {
      return { problem: `${at("media_url")} must be an absolute http: or https: URL` };
    }
    reply.mediaUrl = mediaUrl;
  }
  if (!absent(mediaType)) {
    if (typeof mediaType !== "string" || !MEDIA_TYPE.test(mediaType)) {
      return { problem: `${at("media_type")} must look like type/subtype, e.g. "image/png"` };
    }
    if (reply.mediaUrl === undefined) return { problem: `${at("media_type")} is given without "media_url"` };
    reply.mediaType = mediaType;
  }
  if (reply.text === undefined && reply.mediaUrl === undefined) {
    return {
      problem: `${path === "" ? "the reply" : `"${path}"`} has neither a non-blank "text" nor a "media_url" (answer {"replies": []} for no reply)`,
    };
  }
  return { reply };
}

function absent(value: unknown): boolean {
  return value === undefined || value === null;
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}
