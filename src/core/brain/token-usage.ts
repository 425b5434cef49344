import { isRecord } from "../is-record.js";

/** The tokens one call to a brain used, as its server reported them. */
export interface TokenUsage {
  /** Tokens of what was sent: system prompt, history and the new message. */
  readonly prompt: number;
  /** Tokens of the answer. */
  readonly completion: number;
}

/**
 * The `usage` of an answer body: `{ "usage": { "prompt_tokens", "completion_tokens" } }`, the
 * shape of OpenAI's Chat Completions (Ollama, llama.cpp, vLLM and LM Studio copy it), of Workers
 * AI's text models, and of what an `http` brain's bot may add. Each count must be a
 * non-negative whole number; a count that is missing or anything else is taken as 0, and
 * without a usable count at all there is no usage. Never a failure: a server's accounting is
 * not part of its answer, so a broken one must not cost the reply.
 */
export function usageOf(body: unknown): TokenUsage | undefined {
  if (!isRecord(body) || !isRecord(body.usage)) return undefined;
  const prompt = tokenCount(body.usage.prompt_tokens);
  const completion = tokenCount(body.usage.completion_tokens);
  if (prompt === undefined && completion === undefined) return undefined;
  return { prompt: prompt ?? 0, completion: completion ?? 0 };
}

function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;
}
