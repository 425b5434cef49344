/**
 * The tests' side of the scripted upstream (test/support/scripted-upstream.ts): a real HTTP
 * server on Node, started by the `workers` project's global setup, that a test inside workerd
 * scripts over HTTP. A scenario per test keeps tests apart: point an `outbound_url` or a
 * brain's URL at `scenario.url`, and read back what reached it (types in test/shared/scripted-upstream-wire.ts).
 */
import { afterEach, inject } from "vitest";
import type { ScenarioRecord, ScriptedReply, ScriptedRequest } from "../../shared/scripted-upstream-wire.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The scripted upstream's origin, `http://127.0.0.1:<port>`. */
    scriptedUpstream: string;
  }
}

/** A scenario of the upstream, the test's own. */
export interface Scenario {
  /** The scenario's root, no trailing slash: `outbound_url` is `${url}/replies`, say. */
  readonly url: string;
  /** What reached it, in order of arrival. */
  requests(): Promise<readonly ScriptedRequest[]>;
  /** The most requests it had open at once. */
  maxInFlight(): Promise<number>;
  /** Answers the next requests with `replies` instead (the last one repeating). */
  script(...replies: ScriptedReply[]): Promise<void>;
}

// Taken once, at load: a test that replaces the isolate's `fetch` must not catch these calls.
const controlFetch = globalThis.fetch.bind(globalThis);
const opened: string[] = [];

// Each test's scenarios are forgotten after it, which also cuts the requests they left hanging.
afterEach(async () => {
  for (const id of opened.splice(0)) await control("DELETE", `/_scenario/${id}`);
});

async function control(method: string, path: string, body?: unknown): Promise<Response> {
  const response = await controlFetch(`${inject("scriptedUpstream")}${path}`, {
    method,
    ...(body === undefined ? {} : { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
  });
  if (!response.ok)
    throw new Error(`scripted upstream: ${method} ${path} answered ${response.status}: ${await response.text()}`);
  return response;
}

/** A new scenario answering with `replies` (200 with no body when none are given). */
export async function scenario(...replies: ScriptedReply[]): Promise<Scenario> {
  const created = await control("POST", "/_scenario", { replies: replies.length === 0 ? [{}] : replies });
  const { id, prefix } = (await created.json()) as { id: string; prefix: string };
  opened.push(id);
  const record = async () => (await (await control("GET", `/_scenario/${id}`)).json()) as ScenarioRecord;
  return {
    url: `${inject("scriptedUpstream")}${prefix}`,
    requests: async () => (await record()).requests,
    maxInFlight: async () => (await record()).maxInFlight,
    script: async (...next) => {
      await control("PUT", `/_scenario/${id}`, { replies: next.length === 0 ? [{}] : next });
    },
  };
}

/** Token counts as OpenAI reports them in `usage`. */
export interface OpenAiUsage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
}

/** A Chat Completions answer as OpenAI sends it, with `text` and `usage`. */
export function openAiCompletion(
  text: string,
  usage: OpenAiUsage = { prompt_tokens: 10, completion_tokens: 5 },
): ScriptedReply {
  return {
    body: {
      id: `chatcmpl-${crypto.randomUUID()}`,
      object: "chat.completion",
      created: Math.floor(Date.now() / 1000),
      model: "test-model",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: text, refusal: null },
          logprobs: null,
          finish_reason: "stop",
        },
      ],
      usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
    },
  };
}

/** OpenAI's 429, in its error format, with `Retry-After` in seconds. */
export function openAiRateLimited(retryAfterSeconds: number): ScriptedReply {
  return {
    status: 429,
    headers: { "retry-after": String(retryAfterSeconds) },
    body: {
      error: {
        message: `Rate limit reached for test-model on requests per min (RPM). Please try again in ${retryAfterSeconds}s.`,
        type: "requests",
        param: null,
        code: "rate_limit_exceeded",
      },
    },
  };
}
