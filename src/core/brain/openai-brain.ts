import type { ChannelError } from "../channel-error.js";
import { systemClock } from "../clock.js";
import type { OpenAiBrainConfig } from "../config/brain-schema.js";
import { isRecord } from "../is-record.js";
import type { BrainReply } from "../message/outbound-reply.js";
import type { Brain, BrainRequest } from "./brain.js";
import { type BrainDeps, requireSecret } from "./brain-deps.js";
import {
  type BrainEndpoint,
  brainError,
  isRetryableBrainStatus,
  jsonRequestHeaders,
  malformedAnswer,
  postJson,
  redact,
} from "./brain-endpoint.js";
import { buildChatMessages, chatCompletionText, textReplies } from "./chat-messages.js";
import { usageOf } from "./token-usage.js";

/** The Chat Completions endpoint under an API root, keeping any query (Azure's `api-version`). */
export function chatCompletionsUrl(baseUrl: string): string {
  const url = new URL(baseUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/chat/completions`;
  return url.href;
}

/**
 * A brain on any OpenAI-compatible Chat Completions server (OpenAI, Ollama, llama.cpp
 * server, vLLM, LM Studio). Each call sends the system prompt, the conversation's last
 * `max_history` turns (within `max_history_tokens`) and the new message; the answer's first
 * choice is the one reply, and its `usage` is reported through the request's `onUsage`.
 * The API key is read from `api_key_env` here, once, and is never part of an error.
 */
export function createOpenAiBrain(name: string, config: OpenAiBrainConfig, deps: BrainDeps): Brain {
  const apiKey =
    config.api_key_env === undefined ? undefined : requireSecret(deps.env, config.api_key_env, name, "api_key_env");
  const endpoint: BrainEndpoint = {
    brain: name,
    peer: "the model server",
    url: chatCompletionsUrl(config.base_url),
    timeoutMs: config.timeout_ms,
    headers: jsonRequestHeaders(apiKey),
    secrets: apiKey === undefined ? [] : [apiKey],
    fetch: deps.fetch,
    clock: deps.clock ?? systemClock,
    hint: (status) => {
      if (status === 401 || status === 403) {
        return config.api_key_env === undefined
          ? "the server wants an API key: set api_key_env"
          : `check the API key in ${config.api_key_env}`;
      }
      if (status === 404) return `check "model" (${config.model}) and "base_url"`;
      return undefined;
    },
  };

  return {
    name,
    historyLimit: config.max_history,
    async reply(request: BrainRequest): Promise<readonly BrainReply[]> {
      const payload: Record<string, unknown> = {
        model: config.model,
        messages: buildChatMessages(request, {
          systemPrompt: config.system_prompt,
          maxHistory: config.max_history,
          maxHistoryTokens: config.max_history_tokens,
          imageParts: config.send_images,
        }),
        stream: false,
      };
      if (config.temperature !== undefined) payload.temperature = config.temperature;
      if (config.max_tokens !== undefined) payload.max_tokens = config.max_tokens;

      const answer = await postJson(endpoint, payload, request.trace);
      // Before the answer is judged: a 200 that cannot be used was billed all the same.
      const usage = usageOf(answer.body);
      if (usage !== undefined) request.onUsage?.(name, usage);
      const parsed = chatCompletionText(answer.body);
      if ("problem" in parsed) throw errorInBody(endpoint, answer.body) ?? malformedAnswer(endpoint, parsed.problem);
      return textReplies(parsed.text);
    },
  };
}

/**
 * Some gateways (OpenRouter, proxies) answer 200 with an OpenAI error object instead of
 * choices. Its `code`, when it is an HTTP status (a number, or the digits of one as text, as
 * some write it), decides retrying; a name (`invalid_api_key`) is not one.
 */
function errorInBody(endpoint: BrainEndpoint, body: unknown): ChannelError | undefined {
  if (!isRecord(body) || !isRecord(body.error)) return undefined;
  const { message, code } = body.error;
  const status = httpStatusOf(code);
  return brainError(endpoint, `${endpoint.peer} answered with an error`, {
    retryable: status !== undefined && isRetryableBrainStatus(status),
    ...(status === undefined ? {} : { upstreamStatus: status }),
    ...(typeof message === "string" ? { upstreamMessage: redact(message, endpoint.secrets).slice(0, 500) } : {}),
  });
}

/** `code` as an HTTP status: a whole number in the statuses' range, given as a number or as its digits. */
function httpStatusOf(code: unknown): number | undefined {
  const value = typeof code === "number" ? code : typeof code === "string" && /^\d{3}$/.test(code) ? Number(code) : NaN;
  return Number.isInteger(value) && value >= 100 && value <= 599 ? value : undefined;
}
