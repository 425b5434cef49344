/**
 * The shape of a shared inbound case (inbound-cases.ts), and how the cases build their
 * requests: as plain data, so that each runtime's runner sends them its own way, and as a
 * Web-standard `Request` for the runners that want one.
 */
import { INBOUND_CASES_SECRET } from "./inbound-cases-config.js";

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

/** The `authorization` header of an authenticated request. */
export const AUTH = `Bearer ${INBOUND_CASES_SECRET}`;
/** The media type the endpoint accepts. */
export const JSON_TYPE = "application/json";

/** An authenticated JSON POST of `body` to `path`; `headers` adds to or replaces its headers. */
export function post(path: string, body: string, headers: Record<string, string> = {}): InboundCaseRequest {
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

/** Builds the case's `Request` against `origin` (e.g. `http://127.0.0.1:8090`). */
export function caseRequest(origin: string, request: InboundCaseRequest): Request {
  const init: RequestInit = { method: request.method, headers: { ...request.headers } };
  if (request.body !== undefined) init.body = request.body;
  return new Request(new URL(request.path, origin), init);
}
