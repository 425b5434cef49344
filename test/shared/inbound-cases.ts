/**
 * The inbound endpoint's contract as one table of requests and expected answers, shared by
 * the Node tests and the Workers tests (inside workerd), so both runtimes are held to the
 * same cases. Runtime-neutral on purpose: no `node:` or `cloudflare:` imports, only strings
 * and Web-standard `Request`/`Response`.
 *
 * Every case assumes the configuration {@link INBOUND_CASES_CONFIG}, with the environment
 * variable {@link INBOUND_CASES_SECRET_ENV} set to {@link INBOUND_CASES_SECRET}, and a queue
 * that accepts everything.
 *
 * The cases are in inbound-cases-routing-auth.ts, inbound-cases-media-type-size.ts and
 * inbound-cases-message.ts; the configuration in inbound-cases-config.ts, the case's shape and
 * request builders in inbound-case-requests.ts. Runners import all of it from here.
 */
import type { InboundCase, InboundCaseExpectation } from "./inbound-case-requests.js";
import { MEDIA_TYPE_AND_SIZE_CASES } from "./inbound-cases-media-type-size.js";
import { MESSAGE_CASES } from "./inbound-cases-message.js";
import { ROUTING_AND_AUTH_CASES } from "./inbound-cases-routing-auth.js";

export {
  caseRequest,
  type InboundCase,
  type InboundCaseExpectation,
  type InboundCaseRequest,
  paddedBody,
} from "./inbound-case-requests.js";
export {
  INBOUND_CASES_CONFIG,
  INBOUND_CASES_OUTBOUND_URL,
  INBOUND_CASES_SECRET,
  INBOUND_CASES_SECRET_ENV,
  ONE_MIB,
} from "./inbound-cases-config.js";

/** The cases, in the contract's order: routing, then checks 1 to 5, then the mapping. */
export const INBOUND_CASES: readonly InboundCase[] = [
  ...ROUTING_AND_AUTH_CASES,
  ...MEDIA_TYPE_AND_SIZE_CASES,
  ...MESSAGE_CASES,
];

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
