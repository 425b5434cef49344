/**
 * The model servers the brain-limits*.test.ts files run against: real, on port 0, counting the
 * calls they have in flight; the answers they give; and their closing after each test.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { type JsonTestServer, startJsonServer, type TestResponse } from "../../../support/json-test-server.js";

const servers: { close(): Promise<void> }[] = [];

/** Keeps `server` to be closed by {@link closeServers}. */
export function track<T extends { close(): Promise<void> }>(server: T): T {
  servers.push(server);
  return server;
}

/** Closes every server started or tracked since the last call: each test file's `afterEach`. */
export async function closeServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((server) => server.close()));
}

/** A model server that counts the calls it has in flight at once. */
export interface ModelServer extends JsonTestServer {
  readonly baseUrl: string;
  /** Chat Completions requests received. */
  calls(): number;
  /** The most requests it had in flight at once, as a request arrived (since {@link resetPeak}). */
  maxInFlight(): number;
  /** Requests in flight now. */
  inFlight(): number;
  /** Forgets the peak: from now on {@link maxInFlight} counts what each later arrival found. */
  resetPeak(): void;
  /** The `conversation_id` of each request, in arrival order (http brains send one). */
  conversations(): string[];
}

/**
 * Starts a model server that answers each request with `answer(index)` after `delayMs`,
 * counting what is in flight while it waits.
 */
export async function startModelServer(
  answer: (index: number) => Omit<TestResponse, "delayMs">,
  delayMs: number,
): Promise<ModelServer> {
  let calls = 0;
  let inFlight = 0;
  let maxInFlight = 0;
  const conversations: string[] = [];
  const server = await startJsonServer(async (request) => {
    const index = calls;
    calls += 1;
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const body = request.body as { conversation_id?: unknown } | undefined;
    if (typeof body?.conversation_id === "string") conversations.push(body.conversation_id);
    try {
      await sleep(delayMs);
      return answer(index);
    } finally {
      inFlight -= 1;
    }
  });
  track(server);
  return {
    ...server,
    baseUrl: `${server.origin}/v1`,
    calls: () => calls,
    maxInFlight: () => maxInFlight,
    inFlight: () => inFlight,
    resetPeak: () => {
      maxInFlight = 0;
    },
    conversations: () => [...conversations],
  };
}

/** An answer in OpenAI's Chat Completions format. */
export function completion(content: string): Omit<TestResponse, "delayMs"> {
  return {
    status: 200,
    body: {
      id: "chatcmpl-1",
      object: "chat.completion",
      choices: [{ index: 0, message: { role: "assistant", content } }],
    },
  };
}

/** A 429 with `Retry-After` in seconds, in OpenAI's error format. */
export function tooMany(retryAfterSeconds: number): Omit<TestResponse, "delayMs"> {
  return {
    status: 429,
    headers: { "retry-after": String(retryAfterSeconds) },
    body: { error: { message: "Rate limit reached", type: "requests", code: "rate_limit_exceeded" } },
  };
}
