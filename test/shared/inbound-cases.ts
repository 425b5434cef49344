/**
 * The inbound endpoint's contract as one table of requests and expected answers, shared by
 * the Node tests and the Workers tests (inside workerd), so both runtimes are held to the
 * same cases. Runtime-neutral on purpose: no `node:` or `cloudflare:` imports, only strings
 * and Web-standard `Request`/`Response`.
 *
 * Every case assumes the configuration {@link INBOUND_CASES_CONFIG}, with the environment
 * variable {@link INBOUND_CASES_SECRET_ENV} set to {@link INBOUND_CASES_SECRET}, and a queue
 * that accepts everything.
 */

/** The inbound secret the cases authenticate with. */
export const INBOUND_CASES_SECRET = "inbound-cases-secret-0123456789abcdefghijklmnop";

/** The variable that holds {@link INBOUND_CASES_SECRET}. */
export const INBOUND_CASES_SECRET_ENV = "INBOUND_CASES_SECRET";

/** Where replies would go; the cases never wait for one. */
export const INBOUND_CASES_OUTBOUND_URL = "http://127.0.0.1:9/replies";

/**
 * The configuration the cases assume: a plain channel on `/webhook`, and a channel with a
 * mapping on `/mapped`. Both share one bind, so one Node listener serves both, as one
 * Worker does.
 */
export const INBOUND_CASES_CONFIG = {
  channels: [
    {
      type: "webhook",
      name: "plain",
      token_env: INBOUND_CASES_SECRET_ENV,
      webhook: { bind: "127.0.0.1:0", path: "/webhook", outbound_url: INBOUND_CASES_OUTBOUND_URL },
    },
    {
      type: "webhook",
      name: "mapped",
      token_env: INBOUND_CASES_SECRET_ENV,
      webhook: {
        bind: "127.0.0.1:0",
        path: "/mapped",
        outbound_url: INBOUND_CASES_OUTBOUND_URL,
        mapping: { sender_id: "user", text: "message", conversation_id: "thread" },
      },
    },
  ],
  routes: [
    { channel: "plain", brain: "echo" },
    { channel: "mapped", brain: "echo" },
  ],
} as const;

/** The largest accepted body: 1 MiB. */
export const ONE_MIB = 1_048_576;

/** One request of a case. */
export interface InboundCaseRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
}

/** What the answer must be. */
export interface InboundCaseExpectation {
  readonly status: number;
  /** The problem's `code`, for errors. */
  readonly code?: string;
  /** Headers that must be present, compared exactly (names in lower case). */
  readonly headers?: Readonly<Record<string, string>>;
  /** For `invalid_message`: the `field` of each entry of `errors`, in any order. */
  readonly errorFields?: readonly string[];
  /** For a 200 on the inbound path: the `conversation_id` answered. */
  readonly conversationId?: string;
  /** For other 200s: the exact JSON body. */
  readonly json?: Readonly<Record<string, unknown>>;
}

/** One case of the table. */
export interface InboundCase {
  readonly name: string;
  readonly request: InboundCaseRequest;
  readonly expect: InboundCaseExpectation;
}

const AUTH = `Bearer ${INBOUND_CASES_SECRET}`;
const JSON_TYPE = "application/json";

function post(path: string, body: string, headers: Record<string, string> = {}): InboundCaseRequest {
  return { method: "POST", path, headers: { authorization: AUTH, "content-type": JSON_TYPE, ...headers }, body };
}

/** A JSON object body of exactly `size` bytes (ASCII), padded in an unknown key. */
export function paddedBody(
  size: number,
  fields: Readonly<Record<string, string>> = { sender_id: "u1", text: "hi" },
): string {
  const empty = JSON.stringify({ ...fields, pad: "" });
  return JSON.stringify({ ...fields, pad: "x".repeat(size - empty.length) });
}

const exactlyOneMib = paddedBody(ONE_MIB);
const overOneMib = paddedBody(ONE_MIB + 1);

/** The cases, in the contract's order: routing, then checks 1 to 5, then the mapping. */
export const INBOUND_CASES: readonly InboundCase[] = [
  // Routing comes first.
  {
    name: "404 for an unknown path, before authentication",
    request: { method: "POST", path: "/nope", headers: { "content-type": JSON_TYPE }, body: "{}" },
    expect: { status: 404, code: "not_found", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "405 with Allow: POST for GET on the inbound path",
    request: { method: "GET", path: "/webhook", headers: { authorization: AUTH } },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "POST" } },
  },
  {
    name: "405 for PUT on the inbound path, before authentication",
    request: { method: "PUT", path: "/webhook", headers: { "content-type": JSON_TYPE }, body: "{}" },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "POST" } },
  },
  {
    name: "GET /healthz answers 200 without authentication",
    request: { method: "GET", path: "/healthz", headers: {} },
    expect: { status: 200, json: { status: "ok" } },
  },
  {
    name: "405 with Allow: GET, HEAD for POST /healthz",
    request: { method: "POST", path: "/healthz", headers: {} },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "GET, HEAD" } },
  },
  {
    name: "405 with Allow: GET, HEAD for POST /readyz",
    request: { method: "POST", path: "/readyz", headers: {} },
    expect: { status: 405, code: "method_not_allowed", headers: { allow: "GET, HEAD" } },
  },
  // Check 1: authentication.
  {
    name: "401 with WWW-Authenticate without an Authorization header",
    request: {
      method: "POST",
      path: "/webhook",
      headers: { "content-type": JSON_TYPE },
      body: '{"sender_id":"u1","text":"hi"}',
    },
    expect: {
      status: 401,
      code: "unauthorized",
      headers: { "www-authenticate": 'Bearer realm="webhook-channel"', "content-type": "application/problem+json" },
    },
  },
  {
    name: "401 for a wrong token",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { authorization: `Bearer ${INBOUND_CASES_SECRET}x` }),
    expect: { status: 401, code: "unauthorized", headers: { "www-authenticate": 'Bearer realm="webhook-channel"' } },
  },
  {
    name: "401 for another scheme",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { authorization: `Basic ${INBOUND_CASES_SECRET}` }),
    expect: { status: 401, code: "unauthorized" },
  },
  {
    name: "401 comes before 415 (wrong token and text/plain)",
    request: post("/webhook", "hello", { authorization: "Bearer wrong", "content-type": "text/plain" }),
    expect: { status: 401, code: "unauthorized", headers: { "www-authenticate": 'Bearer realm="webhook-channel"' } },
  },
  {
    name: "200 with the scheme in another case (bEaReR)",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { authorization: `bEaReR ${INBOUND_CASES_SECRET}` }),
    expect: { status: 200, conversationId: "u1" },
  },
  // Check 2: media type.
  {
    name: "415 for text/plain",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "text/plain" }),
    expect: { status: 415, code: "unsupported_media_type", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "415 without a Content-Type",
    request: {
      method: "POST",
      path: "/webhook",
      headers: { authorization: AUTH },
      body: '{"sender_id":"u1","text":"hi"}',
    },
    expect: { status: 415, code: "unsupported_media_type" },
  },
  {
    name: "415 for application/json; charset=latin1",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "application/json; charset=latin1" }),
    expect: { status: 415, code: "unsupported_media_type" },
  },
  {
    name: "415 comes before 413 (text/plain, body over 1 MiB)",
    request: post("/webhook", overOneMib, { "content-type": "text/plain" }),
    expect: { status: 415, code: "unsupported_media_type" },
  },
  {
    name: "200 for APPLICATION/JSON",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "APPLICATION/JSON" }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "200 for application/json; charset=utf-8",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "application/json; charset=utf-8" }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: '200 for application/json; charset="UTF-8" (quoted, upper case)',
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', {
      "content-type": 'application/json; charset="UTF-8"',
    }),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "200 for application/json with another parameter",
    request: post("/webhook", '{"sender_id":"u1","text":"hi"}', { "content-type": "application/json; version=2" }),
    expect: { status: 200, conversationId: "u1" },
  },
  // Check 3: size.
  {
    name: "413 for a Content-Length over 1 MiB",
    request: post("/webhook", overOneMib, { "content-length": String(ONE_MIB + 1) }),
    expect: { status: 413, code: "payload_too_large", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "413 comes before 400 (a body over 1 MiB that is not JSON)",
    request: post("/webhook", `{${"x".repeat(ONE_MIB + 10)}`, { "content-length": String(ONE_MIB + 11) }),
    expect: { status: 413, code: "payload_too_large" },
  },
  {
    name: "200 for a body of exactly 1 MiB",
    request: post("/webhook", exactlyOneMib, { "content-length": String(ONE_MIB) }),
    expect: { status: 200, conversationId: "u1" },
  },
  // Check 4: JSON.
  {
    name: "400 invalid_json for a syntax error",
    request: post("/webhook", '{"sender_id":'),
    expect: { status: 400, code: "invalid_json", headers: { "content-type": "application/problem+json" } },
  },
  {
    name: "400 invalid_json for an empty body",
    request: post("/webhook", ""),
    expect: { status: 400, code: "invalid_json" },
  },
  {
    name: "400 invalid_json for a top-level array",
    request: post("/webhook", '[{"sender_id":"u1","text":"hi"}]'),
    expect: { status: 400, code: "invalid_json" },
  },
  {
    name: "400 invalid_json for a top-level string",
    request: post("/webhook", '"hi"'),
    expect: { status: 400, code: "invalid_json" },
  },
  {
    name: "400 invalid_json for null",
    request: post("/webhook", "null"),
    expect: { status: 400, code: "invalid_json" },
  },
  // Check 5: the message.
  {
    name: "400 invalid_message naming sender_id and text for an empty object",
    request: post("/webhook", "{}"),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id", "text"] },
  },
  {
    name: "400 invalid_message naming text for blank text and no media",
    request: post("/webhook", '{"sender_id":"u1","text":"   "}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["text"] },
  },
  {
    name: "400 invalid_message naming each field of the wrong type",
    request: post("/webhook", '{"sender_id":true,"text":5,"media_url":"ftp://example.com/a.png"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id", "text", "media_url"] },
  },
  {
    name: "400 invalid_message for a sender_id over 256 characters",
    request: post("/webhook", JSON.stringify({ sender_id: "u".repeat(257), text: "hi" })),
    expect: { status: 400, code: "invalid_message", errorFields: ["sender_id"] },
  },
  {
    name: "400 invalid_message for a media_type that is not type/subtype",
    request: post("/webhook", '{"sender_id":"u1","media_url":"https://example.com/a.png","media_type":"png"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["media_type"] },
  },
  {
    name: "200 for media without text",
    request: post("/webhook", '{"sender_id":"u1","media_url":"https://example.com/a.png","media_type":"image/png"}'),
    expect: { status: 200, conversationId: "u1" },
  },
  {
    name: "200 with the conversation id the client sent",
    request: post("/webhook", '{"sender_id":"u1","text":"hi","conversation_id":"c-7"}'),
    expect: { status: 200, conversationId: "c-7" },
  },
  {
    name: "200 for a numeric sender_id, turned into a string",
    request: post("/webhook", '{"sender_id":42,"text":"hi"}'),
    expect: { status: 200, conversationId: "42" },
  },
  {
    name: "200 ignoring unknown keys and null optional fields",
    request: post("/webhook", '{"sender_id":"u1","text":"hi","extra":{"a":1},"sender_name":null}'),
    expect: { status: 200, conversationId: "u1" },
  },
  // The mapping.
  {
    name: "mapping: 200 reading the mapped keys",
    request: post("/mapped", '{"user":"u9","message":"hi","thread":"t-1"}'),
    expect: { status: 200, conversationId: "t-1" },
  },
  {
    name: "mapping: missing content names the mapped text key",
    request: post("/mapped", '{"user":"u9"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["message"] },
  },
  {
    name: "mapping: a mapped field is read only from its mapped key",
    request: post("/mapped", '{"sender_id":"u9","text":"hi"}'),
    expect: { status: 400, code: "invalid_message", errorFields: ["user", "message"] },
  },
  {
    name: "mapping: an unmapped field keeps its own key",
    request: post("/mapped", '{"user":"u9","media_url":"https://example.com/a.png"}'),
    expect: { status: 200, conversationId: "u9" },
  },
];

/** Builds the case's `Request` against `origin` (e.g. `http://127.0.0.1:8090`). */
export function caseRequest(origin: string, request: InboundCaseRequest): Request {
  const init: RequestInit = { method: request.method, headers: { ...request.headers } };
  if (request.body !== undefined) init.body = request.body;
  return new Request(new URL(request.path, origin), init);
}

/** A problem found in an answer, or undefined when it matches the case. */
export async function checkAnswer(response: Response, expected: InboundCaseExpectation): Promise<string | undefined> {
  const text = await response.text();
  if (response.status !== expected.status) return `status ${response.status}, expected ${expected.status}: ${text}`;
  for (const [name, value] of Object.entries(expected.headers ?? {})) {
    if (response.headers.get(name) !== value)
      return `header ${name}: ${String(response.headers.get(name))}, expected ${value}`;
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return `the body is not JSON: ${text.slice(0, 200)}`;
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) return `the body is not a JSON object: ${text}`;
  const record = body as Record<string, unknown>;
  if (expected.json !== undefined) {
    return JSON.stringify(record) === JSON.stringify(expected.json)
      ? undefined
      : `body ${text}, expected ${JSON.stringify(expected.json)}`;
  }
  if (expected.status === 200) {
    if (record.status !== "accepted" || typeof record.message_id !== "string" || record.message_id === "") {
      return `not an acceptance: ${text}`;
    }
    if (expected.conversationId !== undefined && record.conversation_id !== expected.conversationId) {
      return `conversation_id ${String(record.conversation_id)}, expected ${expected.conversationId}`;
    }
    return undefined;
  }
  if (response.headers.get("content-type") !== "application/problem+json") {
    return `content-type ${String(response.headers.get("content-type"))}, expected application/problem+json`;
  }
  for (const key of ["type", "title", "status", "detail", "code"]) {
    if (!(key in record)) return `the problem has no "${key}": ${text}`;
  }
  if (record.status !== expected.status) return `problem status ${String(record.status)}, expected ${expected.status}`;
  if (expected.code !== undefined && record.code !== expected.code) {
    return `code ${String(record.code)}, expected ${expected.code}`;
  }
  if (expected.errorFields !== undefined) {
    const errors = Array.isArray(record.errors) ? (record.errors as unknown[]) : [];
    const fields = errors.map((error) =>
      error !== null && typeof error === "object" && "field" in error ? String(error.field) : "?",
    );
    const want = [...expected.errorFields].sort();
    const got = [...new Set(fields)].sort();
    if (JSON.stringify(got) !== JSON.stringify(want))
      return `error fields ${got.join(", ")}, expected ${want.join(", ")}`;
  }
  return undefined;
}
