import { z } from "zod";
import { envName, fetchedUrl } from "./schema-parts.js";

/** Default time limit of one call to an LLM server: local models on a CPU can be slow. */
export const DEFAULT_LLM_TIMEOUT_MS = 60_000;
/** Default time limit of one call to a bot (`http`, `rasa`). */
export const DEFAULT_BOT_TIMEOUT_MS = 30_000;
/** Default number of earlier messages (the user's and the brain's each count one) sent to a brain. */
export const DEFAULT_MAX_HISTORY = 20;
/** Largest `max_history`: the in-memory conversation store keeps 100 turns per conversation. */
export const MAX_HISTORY_LIMIT = 100;
/** Largest `timeout_ms` of a brain call: 10 minutes. */
export const MAX_BRAIN_TIMEOUT_MS = 600_000;

/** Default `max_concurrency`: calls in flight to one brain, across all conversations. */
export const DEFAULT_BRAIN_CONCURRENCY = 16;
/** Largest `max_concurrency`. */
export const MAX_BRAIN_CONCURRENCY = 1024;

/** The path of Rasa's REST input channel, appended to a Rasa brain's `url`. */
export const RASA_REST_PATH = "/webhooks/rest/webhook";

// config-schema.ts imports this file, so these small rules are repeated here rather than
// imported from it (a cycle would leave one side undefined at load time).

const nonEmpty = (what: string) =>
  z.string({ error: `must be ${what}, a non-empty string` }).min(1, { error: `must be ${what}, a non-empty string` });

const timeoutMs = (byDefault: number) =>
  z
    .int({ error: "must be a whole number of milliseconds" })
    .min(1, { error: "must be at least 1 ms" })
    .max(MAX_BRAIN_TIMEOUT_MS, { error: `must be at most ${MAX_BRAIN_TIMEOUT_MS} ms (10 minutes)` })
    .default(byDefault)
    .describe(`Time limit of one call to the brain, in ms; a timeout is retried. Default ${byDefault}.`);

const maxHistory = z
  .int({ error: "must be a whole number of messages" })
  .min(0, { error: "must be 0 (no memory) or more" })
  .max(MAX_HISTORY_LIMIT, { error: `must be at most ${MAX_HISTORY_LIMIT}` })
  .default(DEFAULT_MAX_HISTORY)
  .describe(
    `Earlier messages of the conversation sent with each new one, oldest first; the user's and the brain's each count one. 0 = no memory (nothing is stored). Default ${DEFAULT_MAX_HISTORY}, at most ${MAX_HISTORY_LIMIT}.`,
  );

const systemPrompt = nonEmpty("the instructions given to the model")
  .optional()
  .describe("Instructions sent first, as the system message, with every request. Default: none.");

const fallback = z
  .array(nonEmpty("the name of another brain"), { error: 'must be a list of brain names, e.g. ["hosted"]' })
  .optional()
  .describe(
    'Other brains, asked in this order and at once when a call to this one fails in a way that would be retried (a timeout, a network error, 408, 425, 429, 5xx); the reply\'s "brain" names the brain that answered. Only when every brain of the list has failed too does the message wait for a retry. Default: none. See docs/brains.md#fallback.',
  );

const maxConcurrency = z
  .int({ error: "must be a whole number of calls" })
  .min(1, { error: "must be at least 1" })
  .max(MAX_BRAIN_CONCURRENCY, { error: `must be at most ${MAX_BRAIN_CONCURRENCY}` })
  .default(DEFAULT_BRAIN_CONCURRENCY)
  .describe(
    `Calls to this brain in flight at once, across all conversations; the others wait their turn, conversations taking turns. A 429 or 503 from the brain pauses it for everyone until its Retry-After. Default ${DEFAULT_BRAIN_CONCURRENCY}. See docs/brains.md#limits.`,
  );

const maxHistoryTokens = z
  .int({ error: "must be a whole number of tokens" })
  .min(1, { error: "must be at least 1" })
  .optional()
  .describe(
    "Bounds the history sent with each message to about this many tokens (estimated from its length), dropping the oldest turns first. Default: no bound besides max_history. See docs/brains.md#tokens.",
  );

/** The built-in echo brain, also definable under another name. */
const echoBrain = z
  .strictObject({
    type: z.literal("echo").describe("Replies with the inbound text and media."),
  })
  .describe("Echo: replies with what it received. For trying the channel out.");

/** Any server that speaks OpenAI's Chat Completions API. */
const openAiBrain = z
  .strictObject({
    type: z.literal("openai").describe("An OpenAI-compatible Chat Completions server."),
    base_url: fetchedUrl("http://127.0.0.1:11434/v1")
      .refine((value) => !/\/chat\/completions\/*$/.test(URL.canParse(value) ? new URL(value).pathname : value), {
        error:
          'must be the API root without "/chat/completions", e.g. "https://api.openai.com/v1" or "http://127.0.0.1:11434/v1"',
      })
      .describe(
        'API root; "/chat/completions" is appended. E.g. "https://api.openai.com/v1", Ollama "http://127.0.0.1:11434/v1", llama.cpp/vLLM "http://127.0.0.1:8000/v1", LM Studio "http://127.0.0.1:1234/v1".',
      ),
    model: nonEmpty('the model name, e.g. "gpt-4o-mini" or "llama3.2"').describe(
      'Model name as the server knows it, e.g. "gpt-4o-mini" or, for Ollama, "llama3.2".',
    ),
    api_key_env: envName("OPENAI_API_KEY")
      .optional()
      .describe(
        "Name of the environment variable that holds the API key, sent as a Bearer token. Omit it for local servers that need none.",
      ),
    system_prompt: systemPrompt,
    temperature: z
      .number({ error: "must be a number from 0 to 2" })
      .min(0, { error: "must be a number from 0 to 2" })
      .max(2, { error: "must be a number from 0 to 2" })
      .optional()
      .describe("Sampling temperature, 0 to 2. Default: the server's."),
    max_tokens: z
      .int({ error: "must be a whole number of tokens" })
      .min(1, { error: "must be at least 1" })
      .optional()
      .describe("Longest answer, in tokens (sent as max_tokens). Default: the server's."),
    send_images: z
      .boolean({ error: "must be true or false" })
      .default(true)
      .describe(
        "true: an image media_url is sent as an image_url content part (for vision models); false: it is described in text, for text-only models that reject images. Default true.",
      ),
    timeout_ms: timeoutMs(DEFAULT_LLM_TIMEOUT_MS),
    max_history: maxHistory,
    max_history_tokens: maxHistoryTokens,
    max_concurrency: maxConcurrency,
    fallback,
  })
  .describe("OpenAI-compatible Chat Completions: OpenAI, Ollama, llama.cpp server, vLLM, LM Studio.");

/** The user's own bot behind an HTTP endpoint. */
const httpBrain = z
  .strictObject({
    type: z.literal("http").describe("Your own bot behind an HTTP endpoint."),
    url: fetchedUrl("http://127.0.0.1:5000/bot").describe(
      "Where the message and its history are POSTed as JSON; the answer carries the replies (see docs/brains.md).",
    ),
    token_env: envName("BOT_TOKEN")
      .optional()
      .describe("Name of the environment variable whose value is sent as a Bearer token. Default: no Authorization."),
    timeout_ms: timeoutMs(DEFAULT_BOT_TIMEOUT_MS),
    max_history: maxHistory,
    max_history_tokens: maxHistoryTokens,
    max_concurrency: maxConcurrency,
    fallback,
  })
  .describe("HTTP: POSTs each message with its history to your bot and delivers the replies it answers.");

/** A Rasa server's REST input channel. */
const rasaBrain = z
  .strictObject({
    type: z.literal("rasa").describe("A Rasa server's REST channel."),
    url: fetchedUrl("http://127.0.0.1:5005").describe(
      `Base URL of the Rasa server, e.g. "http://127.0.0.1:5005"; "${RASA_REST_PATH}" is appended unless the URL already ends with it.`,
    ),
    timeout_ms: timeoutMs(DEFAULT_BOT_TIMEOUT_MS),
    max_concurrency: maxConcurrency,
    fallback,
  })
  .describe(
    "Rasa: messages go to the REST channel with the conversation id as sender; Rasa keeps its own tracker, so no history is sent.",
  );

/** Cloudflare Workers AI through the Worker's `AI` binding. */
const workersAiBrain = z
  .strictObject({
    type: z.literal("workers-ai").describe("Cloudflare Workers AI, through the Worker's AI binding. Workers only."),
    model: nonEmpty('a Workers AI model id, e.g. "@cf/meta/llama-3.1-8b-instruct"').describe(
      'Workers AI text-generation model id, e.g. "@cf/meta/llama-3.1-8b-instruct".',
    ),
    system_prompt: systemPrompt,
    max_history: maxHistory,
    max_history_tokens: maxHistoryTokens,
    max_concurrency: maxConcurrency,
    fallback,
  })
  .describe(
    "Workers AI: needs the Workers runtime and an [ai] binding named AI in wrangler.toml; not available on Node.",
  );

/** The brain types, for messages. */
export const BRAIN_TYPES = ["echo", "openai", "http", "rasa", "workers-ai"] as const;

/**
 * One entry of the top-level `brains` object: a definition chosen by `type`.
 * Each brain type adds its own strict object here.
 */
export const brainSchema = z
  .discriminatedUnion("type", [echoBrain, openAiBrain, httpBrain, rasaBrain, workersAiBrain], {
    error: `must have a "type" naming a known brain type: ${BRAIN_TYPES.map((type) => `"${type}"`).join(", ")}`,
  })
  .describe("A brain definition; its type decides the other keys.");

/** An `openai` brain definition, defaults applied. */
export type OpenAiBrainConfig = z.output<typeof openAiBrain>;
/** An `http` brain definition, defaults applied. */
export type HttpBrainConfig = z.output<typeof httpBrain>;
/** A `rasa` brain definition, defaults applied. */
export type RasaBrainConfig = z.output<typeof rasaBrain>;
/** A `workers-ai` brain definition, defaults applied. */
export type WorkersAiBrainConfig = z.output<typeof workersAiBrain>;

/**
 * The `fallback` list of a brain definition. Empty for `echo`, which takes no `fallback`: it
 * never fails, so a fallback of it could never be asked.
 */
export function fallbackNames(definition: z.output<typeof brainSchema>): readonly string[] {
  return definition.type === "echo" ? [] : (definition.fallback ?? []);
}
