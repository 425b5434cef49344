import { ChannelError, errorMessage, isChannelError } from "../channel-error.js";
import type { Clock } from "../clock.js";
import { type TraceContext, traceHeaders } from "../http/trace-context.js";
import { isRecord } from "../is-record.js";
import { parseRetryAfterMs } from "../lifecycle/retry-policy.js";
import { redactUrl } from "../log/redact-url.js";
import { isRetryableStatus } from "../outbound/deliver-reply.js";
import { VERSION } from "../version.js";

/**
 * Statuses after which a brain may answer later: those of a reply (`isRetryableStatus`) but
 * 409, which a model server or bot answers for a request that will not change.
 */
export function isRetryableBrainStatus(status: number): boolean {
  return status !== 409 && isRetryableStatus(status);
}

/** The largest answer a brain server may send; more is a broken server, not a reply. */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024;

/** Longest piece of a server's error message kept in ours. */
const MAX_SERVER_MESSAGE_CHARS = 500;

/** An error code or type as APIs name them (`invalid_api_key`, `model_not_found`, `429`). */
const ERROR_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;

/** One HTTP endpoint a brain talks to, resolved once when the brain is created. */
export interface BrainEndpoint {
  /** Brain name, for messages and log fields. */
  readonly brain: string;
  /** Who answers, for messages: "the model server", "the bot", "the Rasa server". */
  readonly peer: string;
  readonly url: string;
  readonly timeoutMs: number;
  /** Extra request headers (Authorization included, when there is one). */
  readonly headers: Readonly<Record<string, string>>;
  /** Secret values that must never appear in an error: they are replaced wherever a server echoes them. */
  readonly secrets: readonly string[];
  readonly fetch: typeof fetch;
  readonly clock: Clock;
  /** A hint added to the error of a given status, e.g. which setting to check after a 401. */
  readonly hint?: (status: number) => string | undefined;
}

/** A 2xx answer. `body` is the parsed JSON, or undefined when the body was empty. */
export interface JsonAnswer {
  readonly status: number;
  readonly body: unknown;
}

/** Headers every brain request carries. */
export function jsonRequestHeaders(bearer: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "user-agent": `webhook-channel/${VERSION}`,
  };
  if (bearer !== undefined) headers.authorization = `Bearer ${bearer}`;
  return headers;
}

/**
 * POSTs `payload` as JSON and returns the parsed 2xx answer. Every failure is a
 * `brain_failed` ChannelError: timeouts, network errors, 429 and 5xx are retryable; other
 * statuses, redirects and answers that are not JSON are not. Errors carry the server's own
 * message with every secret blanked out, and `retryAfterMs` when a retryable answer carried
 * `Retry-After` or `retry-after-ms`. With the message's `trace`, the request carries a
 * `traceparent` of that trace and a new span id.
 */
export async function postJson(endpoint: BrainEndpoint, payload: unknown, trace?: TraceContext): Promise<JsonAnswer> {
  let response: Response;
  try {
    response = await endpoint.fetch(endpoint.url, {
      method: "POST",
      headers: trace === undefined ? endpoint.headers : { ...endpoint.headers, ...traceHeaders(trace) },
      body: JSON.stringify(payload),
      // A redirect would be a misconfigured URL; following it could also carry the
      // Authorization header somewhere unexpected.
      redirect: "manual",
      signal: AbortSignal.timeout(endpoint.timeoutMs),
    });
  } catch (error) {
    throw transportError(endpoint, error);
  }

  let text: string;
  try {
    text = await readText(endpoint, response);
  } catch (error) {
    throw isChannelError(error) ? error : transportError(endpoint, error);
  }

  // Node and Workers hand back the 3xx itself with redirect "manual" (no opaque redirect).
  if (response.status >= 300 && response.status < 400) {
    const location = response.headers.get("location");
    const target =
      location !== null && URL.canParse(location, endpoint.url)
        ? ` to ${redactUrl(new URL(location, endpoint.url).href)}`
        : "";
    throw brainError(
      endpoint,
      `${endpoint.peer} answered ${response.status}, a redirect${target}; redirects are not followed, so configure the final URL`,
      { retryable: false, upstreamStatus: response.status },
    );
  }
  if (response.status < 200 || response.status >= 300) throw statusError(endpoint, response, text);
  if (text.trim() === "") return { status: response.status, body: undefined };
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    const type = response.headers.get("content-type");
    throw malformedAnswer(endpoint, `the body is not JSON${type === null ? "" : ` (content-type ${type})`}`);
  }
}

/** A non-retryable error for an answer that does not have the expected shape. */
export function malformedAnswer(endpoint: BrainEndpoint, problem: string): ChannelError {
  return brainError(endpoint, `${endpoint.peer} sent an answer this brain cannot use: ${problem}`, {
    retryable: false,
  });
}

/** Options of {@link brainError}. */
export interface BrainErrorOptions {
  readonly retryable: boolean;
  readonly upstreamStatus?: number;
  readonly retryAfterMs?: number;
  readonly timeout?: boolean;
  readonly upstreamErrorType?: string;
  readonly upstreamErrorCode?: string;
  /** The server's own words (see {@link ChannelError.upstreamMessage}); secrets are redacted here. */
  readonly upstreamMessage?: string;
  readonly cause?: unknown;
}

/** A `brain_failed` error naming the brain, with the upstream facts for the retry and the log. */
export function brainError(endpoint: BrainEndpoint, what: string, options: BrainErrorOptions): ChannelError {
  const { cause, timeout, upstreamMessage, upstreamErrorType, upstreamErrorCode, ...facts } = options;
  return new ChannelError("brain_failed", `brain "${endpoint.brain}": ${redact(what, endpoint.secrets)}`, {
    ...facts,
    ...(upstreamErrorType === undefined ? {} : { upstreamErrorType: redact(upstreamErrorType, endpoint.secrets) }),
    ...(upstreamErrorCode === undefined ? {} : { upstreamErrorCode: redact(upstreamErrorCode, endpoint.secrets) }),
    ...(upstreamMessage === undefined ? {} : { upstreamMessage: redact(upstreamMessage, endpoint.secrets) }),
    status: timeout === true ? 504 : 502,
    brain: endpoint.brain,
    url: redactUrl(endpoint.url),
    timedOut: timeout === true,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Replaces every occurrence of a secret, so a server that echoes a key cannot leak it into logs. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (secret !== "") out = out.split(secret).join("[redacted]");
  return out;
}

function transportError(endpoint: BrainEndpoint, error: unknown): ChannelError {
  const name = error instanceof Error || error instanceof DOMException ? error.name : "";
  if (name === "TimeoutError" || name === "AbortError") {
    return brainError(
      endpoint,
      `no answer from ${endpoint.peer} at ${redactUrl(endpoint.url)} within ${endpoint.timeoutMs} ms`,
      { retryable: true, timeout: true, cause: error },
    );
  }
  // Node's fetch says only "fetch failed"; the reason (ECONNREFUSED, ENOTFOUND...) is its cause.
  const cause = error instanceof Error && error.cause !== undefined ? `: ${errorMessage(error.cause)}` : "";
  return brainError(
    endpoint,
    `cannot reach ${endpoint.peer} at ${redactUrl(endpoint.url)}: ${errorMessage(error)}${cause}`,
    {
      retryable: true,
      cause: error,
    },
  );
}

function statusError(endpoint: BrainEndpoint, response: Response, text: string): ChannelError {
  const status = response.status;
  const server = serverError(text, endpoint.secrets);
  const hint = endpoint.hint?.(status);
  const retryable = isRetryableBrainStatus(status);
  const retryAfterMs = retryable ? retryAfter(response.headers, endpoint.clock.now()) : undefined;
  // The error's code or type names what went wrong without quoting the request, as its words may.
  const named = [server.code, server.type].find((value) => value !== undefined && ERROR_NAME.test(value));
  const said = named === undefined ? "" : ` (${named})`;
  return brainError(endpoint, `${endpoint.peer} answered ${status}${said}${hint === undefined ? "" : ` (${hint})`}`, {
    retryable,
    upstreamStatus: status,
    ...(server.message === undefined ? {} : { upstreamMessage: server.message }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    // Logged at every level: only what reads as a name, like the message's.
    ...(server.type === undefined || !ERROR_NAME.test(server.type) ? {} : { upstreamErrorType: server.type }),
    ...(server.code === undefined || !ERROR_NAME.test(server.code) ? {} : { upstreamErrorCode: server.code }),
  });
}

/**
 * `retry-after-ms` (OpenAI, Azure) is more precise than `Retry-After`, so it wins when both
 * are present.
 */
function retryAfter(headers: Headers, now: number): number | undefined {
  const precise = headers.get("retry-after-ms");
  if (precise !== null && /^\d+(\.\d+)?$/.test(precise.trim())) return Math.ceil(Number(precise.trim()));
  return parseRetryAfterMs(headers.get("retry-after"), now);
}

/**
 * The message, type and code of an error body. Understands OpenAI's `{error:{message,type,code}}`
 * (also used by Ollama, llama.cpp and vLLM), `{error:"..."}`, `{message}` and FastAPI's
 * `{detail}`; a short plain-text body is taken as it is; HTML is left out.
 */
function serverError(text: string, secrets: readonly string[]): { message?: string; type?: string; code?: string } {
  // Secrets are blanked before the server's words are cut: a secret cut in two would no longer be found.
  const clip = (words: string): string => clipped(redact(words, secrets));
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const plain = text.trim();
    if (plain === "" || plain.startsWith("<")) return {};
    return { message: clip(plain) };
  }
  if (!isRecord(body)) return {};
  const error = body.error;
  if (typeof error === "string") return { message: clip(error) };
  const source = isRecord(error) ? error : body;
  const message = [source.message, source.detail, body.detail].find((value) => typeof value === "string");
  const result: { message?: string; type?: string; code?: string } = {};
  if (typeof message === "string") result.message = clip(message);
  if (typeof source.type === "string") result.type = source.type;
  if (typeof source.code === "string" || typeof source.code === "number") result.code = String(source.code);
  return result;
}

async function readText(endpoint: BrainEndpoint, response: Response): Promise<string> {
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let total = 0;
  let text = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      // An error answer is judged by its status (a 5xx retried, a fallback asked); its words are
      // read only for the message, and a large error page must not make it a brain's bad answer.
      if (!response.ok) return text;
      throw brainError(endpoint, `${endpoint.peer} sent an answer larger than ${MAX_ANSWER_BYTES} bytes`, {
        retryable: false,
        upstreamStatus: response.status,
      });
    }
    text += decoder.decode(value, { stream: true });
  }
  return text + decoder.decode();
}

function clipped(text: string): string {
  const trimmed = text.trim();
  return trimmed.length > MAX_SERVER_MESSAGE_CHARS ? `${trimmed.slice(0, MAX_SERVER_MESSAGE_CHARS)}…` : trimmed;
}
