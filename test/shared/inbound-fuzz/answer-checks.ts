import { clip } from "./describe-case.js";
import type { FuzzCase } from "./fuzz-case.js";
import { SECRETS } from "./fuzz-secrets.js";

const TYPE_BASE = "https://github.com/webhook-channel/webhook-channel/blob/main/docs/http-api.md#error-";

/** The problem codes each error status may carry (src/core: refusals, request-checks, admin). */
const CODES_BY_STATUS: ReadonlyMap<number, readonly string[]> = new Map([
  [400, ["invalid_json", "invalid_message"]],
  [401, ["unauthorized"]],
  [404, ["not_found"]],
  [405, ["method_not_allowed"]],
  [409, ["request_in_progress", "channel_not_configured"]],
  [413, ["payload_too_large"]],
  [415, ["unsupported_media_type"]],
  [422, ["idempotency_key_reused"]],
  [429, ["too_many_requests"]],
  [503, ["buffer_full", "state_unavailable", "shutting_down"]],
]);

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** What is wrong with one answer; empty when it keeps the rule. */
export function problemsOf(c: FuzzCase, response: Response, text: string): string[] {
  const problems: string[] = [];
  const { status } = response;
  const contentType = response.headers.get("content-type") ?? "";
  const pathname = new URL(`http://localhost${c.path}`).pathname;
  const isHead = c.method === "HEAD";
  if (isHead && text !== "") problems.push("a HEAD answer has a body");
  for (const secret of SECRETS) if (text.includes(secret)) problems.push("the answer repeats a secret");

  // /readyz answers its report as JSON, 503 while the service stops: a deliberate exception.
  if (pathname === "/readyz" && (status === 200 || status === 503) && (c.method === "GET" || isHead)) {
    if (!contentType.startsWith("application/json")) problems.push(`readyz content-type ${contentType}`);
    if (!isHead) {
      const report = parseJson(text);
      const expected = c.world.shuttingDown ? "draining" : "ready";
      if (!isObject(report) || report.status !== expected) problems.push(`readyz reported ${clip(text)}`);
    }
    return problems;
  }
  if (status >= 200 && status < 300) {
    if (status === 200 && !isHead && contentType.startsWith("application/json") && parseJson(text) === undefined) {
      problems.push("a 200 JSON answer does not parse");
    }
    if (status === 200 && !isHead && (pathname === "/webhook" || pathname === "/hooks/in") && c.method === "POST") {
      const accepted = parseJson(text);
      if (!isObject(accepted) || accepted.status !== "accepted" || typeof accepted.message_id !== "string") {
        problems.push(`a 200 on the channel is not an acceptance: ${clip(text)}`);
      }
    }
    return problems;
  }
  if (status >= 300 && status < 400) {
    // Only `/admin` redirects, to the console's page.
    if (!(status === 308 && pathname === "/admin" && response.headers.get("location") === "/admin/")) {
      problems.push(`unexpected redirect ${status} to ${response.headers.get("location")}`);
    }
    return problems;
  }

  const allowed = CODES_BY_STATUS.get(status);
  if (allowed === undefined) problems.push(`status ${status} is not one the service means to answer`);
  if (!contentType.startsWith("application/problem+json")) problems.push(`content-type ${clip(contentType)}`);
  if (isHead) return problems;
  const problem = parseJson(text);
  if (!isObject(problem)) {
    problems.push(`the problem body does not parse as a JSON object: ${clip(text)}`);
    return problems;
  }
  if (problem.status !== status) problems.push(`problem.status ${String(problem.status)} is not ${status}`);
  const code = typeof problem.code === "string" ? problem.code : "";
  if (allowed !== undefined && !allowed.includes(code)) problems.push(`status ${status} with code ${clip(code)}`);
  if (problem.type !== `${TYPE_BASE}${code}`) problems.push(`problem.type ${clip(String(problem.type))}`);
  if (typeof problem.title !== "string" || typeof problem.detail !== "string") problems.push("no title or detail");
  if (code === "shutting_down" && !c.world.shuttingDown) problems.push("shutting_down while not stopping");
  if (status === 401 && response.headers.get("www-authenticate") === null)
    problems.push("401 without WWW-Authenticate");
  if (status === 405 && response.headers.get("allow") === null) problems.push("405 without Allow");
  if ((status === 429 || status === 503) && !/^[1-9]\d*$/.test(response.headers.get("retry-after") ?? "")) {
    problems.push(`${status} without a Retry-After in seconds`);
  }
  return problems;
}
