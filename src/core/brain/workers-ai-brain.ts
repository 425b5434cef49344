import { ChannelError, errorMessage } from "../channel-error.js";
import type { WorkersAiBrainConfig } from "../config/brain-schema.js";
import { isRecord } from "../is-record.js";
import type { BrainReply } from "../message/outbound-reply.js";
import type { Brain, BrainRequest } from "./brain.js";
import type { AiBinding } from "./brain-deps.js";
import { buildChatMessages, chatCompletionText, textReplies } from "./chat-messages.js";
import { usageOf } from "./token-usage.js";

/** Workers AI's answer when the model is rate-limited or out of capacity (error 3040). */
const CAPACITY_ERROR = /\b3040\b|capacity temporarily exceeded|rate limit/i;

/** Workers AI's error number, as its messages give it (`InferenceUpstreamError: 3040: …`). */
const ERROR_NUMBER = /\b(\d{4}):/;

/**
 * Workers AI error codes that asking again will not fix: 5004/5005/5006 invalid input,
 * 5007 no such model, 5016 a model whose licence must be accepted first. Anything else
 * (capacity 3040, daily limits, timeouts, internal errors) may pass later.
 */
const PERMANENT_ERROR = /\b(500[4-7]|5016)\b|no such model|invalid input/i;

/**
 * A brain on Cloudflare Workers AI: `ai.run(model, { messages })` through the Worker's `AI`
 * binding, with the system prompt, the last `max_history` turns (within `max_history_tokens`)
 * and the new message. Workers AI text models take text only, so media are described in text.
 * The answer's `usage`, when the model reports one, goes to the request's `onUsage`.
 */
export function createWorkersAiBrain(name: string, config: WorkersAiBrainConfig, ai: AiBinding): Brain {
  return {
    name,
    historyLimit: config.max_history,
    async reply(request: BrainRequest): Promise<readonly BrainReply[]> {
      const messages = buildChatMessages(request, {
        systemPrompt: config.system_prompt,
        maxHistory: config.max_history,
        maxHistoryTokens: config.max_history_tokens,
        imageParts: false,
      });
      let answer: unknown;
      try {
        answer = await ai.run(config.model, { messages });
      } catch (error) {
        const said = errorMessage(error).slice(0, 500);
        // Its error number names the failure; its words may quote the input, so they stay apart.
        const code = ERROR_NUMBER.exec(said)?.[1];
        throw new ChannelError(
          "brain_failed",
          `brain "${name}": Workers AI failed${code === undefined ? "" : ` (${code})`}`,
          {
            status: 502,
            upstreamMessage: said,
            ...(code === undefined ? {} : { upstreamErrorCode: code }),
            retryable: !PERMANENT_ERROR.test(said),
            // Workers AI's "3040: Capacity temporarily exceeded" is its rate limit: a 429, which
            // pauses the brain for every conversation (see brain-limiter.ts).
            ...(CAPACITY_ERROR.test(said) ? { upstreamStatus: 429 } : {}),
            brain: name,
            model: config.model,
            cause: error,
          },
        );
      }
      // Text models answer `usage` with OpenAI's names, in both of their shapes; counted before
      // the answer is judged, since the call was billed either way.
      const usage = usageOf(answer);
      if (usage !== undefined) request.onUsage?.(name, usage);
      const text = workersAiText(answer);
      if (text === undefined) {
        throw new ChannelError(
          "brain_failed",
          `brain "${name}": Workers AI sent an answer this brain cannot use: expected { "response": "<text>" } (is "${config.model}" a text-generation model?)`,
          { status: 502, retryable: false, brain: name, model: config.model },
        );
      }
      return textReplies(text);
    },
  };
}

/** The text of a Workers AI answer: `{ response }`, or the Chat Completions shape some models use. */
function workersAiText(answer: unknown): string | undefined {
  if (!isRecord(answer)) return undefined;
  if (typeof answer.response === "string") return answer.response;
  if ("choices" in answer) {
    const parsed = chatCompletionText(answer);
    return "text" in parsed ? parsed.text : undefined;
  }
  return undefined;
}
