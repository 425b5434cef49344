import { type JsonTestServer, type RecordedRequest, startJsonServer, type TestResponse } from "./json-test-server.js";

/** A chat message as the server received it. */
export interface ReceivedChatMessage {
  readonly role: string;
  readonly content: unknown;
}

/** Options of the fake OpenAI-compatible server. */
export interface OpenAiServerOptions {
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, else 401 as OpenAI answers. */
  readonly apiKey?: string;
  /** Models the server knows; another is a 404 `model_not_found`. Default ["test-model"]. */
  readonly models?: readonly string[];
  /** The assistant's text for a request; default a deterministic echo of the last user message. */
  readonly answer?: (messages: readonly ReceivedChatMessage[]) => string | readonly unknown[] | null;
  /** Misbehave by echoing the whole wrong key in 401 messages (tests that we redact it). */
  readonly echoKeyInErrors?: boolean;
  /**
   * Answer 400 as vLLM does for a strict chat template (Mistral's, Gemma's) unless the messages
   * are an optional system message, then user and assistant in turn, ending with a user message.
   */
  readonly strictRoles?: boolean;
}

/** What Mistral's and Gemma's chat templates raise, and vLLM or llama.cpp answer 400 with. */
const ROLES_MUST_ALTERNATE = "Conversation roles must alternate user/assistant/user/assistant/...";

/** True when `messages` pass a strict chat template's checks (see `strictRoles`). */
function rolesAlternate(messages: readonly ReceivedChatMessage[]): boolean {
  const turns = messages[0]?.role === "system" ? messages.slice(1) : messages;
  const expected = (index: number) => (index % 2 === 0 ? "user" : "assistant");
  return turns.length % 2 === 1 && turns.every((message, index) => message.role === expected(index));
}

/** The fake server. */
export interface OpenAiCompatibleServer extends JsonTestServer {
  /** The API root to configure as `base_url`: `<origin>/v1`. */
  readonly baseUrl: string;
  /** Bodies of the Chat Completions requests, in order (failed ones included). */
  chatBodies(): Record<string, unknown>[];
  /** Messages of the n-th Chat Completions request. */
  messagesOf(index: number): ReceivedChatMessage[];
  /** The next requests are answered with these, in order, before normal service resumes. */
  failNext(...responses: TestResponse[]): void;
}

/** An error in OpenAI's documented format: `{ "error": { message, type, param, code } }`. */
export function openAiError(
  status: number,
  message: string,
  type: string,
  code: string | null,
  headers: Readonly<Record<string, string>> = {},
): TestResponse {
  return { status, headers, body: { error: { message, type, param: null, code } } };
}

/** A 429 as OpenAI sends it, with `Retry-After` in seconds. */
export function rateLimited(retryAfterSeconds: number): TestResponse {
  return openAiError(
    429,
    `Rate limit reached for test-model in organization org-test on requests per min (RPM): Limit 3, Used 3, Requested 1. Please try again in ${retryAfterSeconds}s.`,
    "requests",
    "rate_limit_exceeded",
    { "retry-after": String(retryAfterSeconds) },
  );
}

/** The default answer: names the last user text and how many messages came before it. */
export function defaultAnswer(messages: readonly ReceivedChatMessage[]): string {
  const users = messages.filter((message) => message.role === "user");
  const last = users.at(-1);
  const text =
    typeof last?.content === "string"
      ? last.content
      : Array.isArray(last?.content)
        ? (last.content as { type?: string; text?: string }[])
            .filter((part) => part.type === "text")
            .map((part) => part.text)
            .join(" ")
        : "";
  return `reply to "${text}"`;
}

/**
 * A local server that answers like OpenAI's Chat Completions API (`POST /v1/chat/completions`,
 * `GET /v1/models`), with its error format: 401 for a missing or wrong key, 404 for an
 * unknown model or path, 400 for a malformed request, and scripted failures such as 429
 * with `Retry-After`. It records every request.
 */
export async function startOpenAiCompatibleServer(options: OpenAiServerOptions = {}): Promise<OpenAiCompatibleServer> {
  const models = options.models ?? ["test-model"];
  const answer = options.answer ?? defaultAnswer;
  const scripted: TestResponse[] = [];
  let created = 1_700_000_000;
  let counter = 0;

  const handle = (request: RecordedRequest): TestResponse => {
    const path = request.path.split("?")[0] ?? "";
    const auth = checkAuth(request, options);
    if (auth !== undefined) return auth;
    if (request.method === "GET" && path === "/v1/models") {
      return {
        status: 200,
        body: { object: "list", data: models.map((id) => ({ id, object: "model", created, owned_by: "test" })) },
      };
    }
    if (request.method !== "POST" || path !== "/v1/chat/completions") {
      return openAiError(404, `Invalid URL (${request.method} ${path})`, "invalid_request_error", null);
    }
    const next = scripted.shift();
    if (next !== undefined) return next;
    const body = request.body;
    if (body === null || typeof body !== "object") {
      return openAiError(400, "We could not parse the JSON body of your request.", "invalid_request_error", null);
    }
    const { model, messages } = body as { model?: unknown; messages?: unknown };
    if (typeof model !== "string") {
      return openAiError(400, "you must provide a model parameter", "invalid_request_error", null);
    }
    if (!Array.isArray(messages) || messages.length === 0) {
      return openAiError(400, "'messages' is a required property", "invalid_request_error", null);
    }
    if (!models.includes(model)) {
      return openAiError(
        404,
        `The model \`${model}\` does not exist or you do not have access to it.`,
        "invalid_request_error",
        "model_not_found",
      );
    }
    if (options.strictRoles === true && !rolesAlternate(messages as ReceivedChatMessage[])) {
      return openAiError(400, ROLES_MUST_ALTERNATE, "BadRequestError", null);
    }
    counter += 1;
    created += 1;
    const content = answer(messages as ReceivedChatMessage[]);
    return {
      status: 200,
      headers: { "x-request-id": `req_${counter}` },
      body: {
        id: `chatcmpl-${counter}`,
        object: "chat.completion",
        created,
        model,
        choices: [
          { index: 0, message: { role: "assistant", content, refusal: null }, logprobs: null, finish_reason: "stop" },
        ],
        usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        system_fingerprint: "fp_test",
      },
    };
  };

  const server = await startJsonServer(handle);
  const chat = () => server.requests.filter((request) => request.path.split("?")[0] === "/v1/chat/completions");
  return {
    ...server,
    baseUrl: `${server.origin}/v1`,
    chatBodies: () => chat().map((request) => request.body as Record<string, unknown>),
    messagesOf: (index) => {
      const request = chat()[index];
      if (request === undefined) throw new Error(`no chat request #${index}`);
      return (request.body as { messages: ReceivedChatMessage[] }).messages;
    },
    failNext: (...responses) => {
      scripted.push(...responses);
    },
  };
}

function checkAuth(request: RecordedRequest, options: OpenAiServerOptions): TestResponse | undefined {
  if (options.apiKey === undefined) return undefined;
  const header = request.headers.authorization;
  if (header === undefined) {
    return openAiError(
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
      "invalid_request_error",
      null,
    );
  }
  const key = header.replace(/^Bearer\s+/i, "");
  if (key === options.apiKey) return undefined;
  const shown = options.echoKeyInErrors === true ? key : `${key.slice(0, 3)}${"*".repeat(8)}${key.slice(-4)}`;
  return openAiError(
    401,
    `Incorrect API key provided: ${shown}. You can find your API key at https://platform.openai.com/account/api-keys.`,
    "invalid_request_error",
    "invalid_api_key",
  );
}
