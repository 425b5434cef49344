import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ChannelError, type ErrorCode } from "../../../src/core/channel-error.js";
import { renderProblem } from "../../../src/core/http/problem-response.js";

const root = new URL("../../../", import.meta.url);
const httpApi = readFileSync(new URL("docs/http-api.md", root), "utf8");

// Every code, once: adding a code to ErrorCode without adding it here is a type error.
const CODES: Readonly<Record<ErrorCode, true>> = {
  unauthorized: true,
  unsupported_media_type: true,
  payload_too_large: true,
  invalid_json: true,
  invalid_message: true,
  buffer_full: true,
  state_unavailable: true,
  shutting_down: true,
  request_in_progress: true,
  idempotency_key_reused: true,
  channel_not_configured: true,
  too_many_requests: true,
  not_found: true,
  method_not_allowed: true,
  bad_request: true,
  request_timeout: true,
  expectation_failed: true,
  not_implemented: true,
  headers_too_large: true,
  internal_error: true,
  brain_failed: true,
  delivery_failed: true,
  config_invalid: true,
  lane_fenced: true,
};
const codes = Object.keys(CODES) as ErrorCode[];

describe("problem type URIs and docs/http-api.md", () => {
  it("lists the same codes as the ErrorCode union", () => {
    // The union as written in the source, so that vitest (which does not typecheck) catches a new code too.
    const source = readFileSync(new URL("src/core/channel-error.ts", root), "utf8");
    const union = source.slice(
      source.indexOf("export type ErrorCode ="),
      source.indexOf(";", source.indexOf("export type ErrorCode =")),
    );
    const inSource = [...union.matchAll(/"([a-z_]+)"/g)].map((match) => match[1]);
    expect(inSource.sort()).toEqual([...codes].sort());
  });

  it.each(codes)("has an anchored heading for %s", (code) => {
    const lines = httpApi.split("\n");
    const at = lines.indexOf(`<a id="error-${code}"></a>`);
    expect(
      at,
      `docs/http-api.md needs <a id="error-${code}"></a> before the heading of ${code}`,
    ).toBeGreaterThanOrEqual(0);
    expect(lines[at + 1]).toMatch(new RegExp(`^### (\\d{3} )?\`${code}\`$`));
    expect(lines.filter((line) => line === `<a id="error-${code}"></a>`)).toHaveLength(1);
  });

  it.each(codes)("renders the type URI of %s as a link to its heading", (code) => {
    const { body } = renderProblem(new ChannelError(code, "x", { status: 400 }));
    const type = new URL((JSON.parse(body) as { type: string }).type);
    expect(type.hash).toBe(`#error-${code}`);
    expect(type.origin).toBe("https://github.com");
    // The URI names the page in this repository that holds the heading.
    const page = type.pathname.match(/^\/[^/]+\/[^/]+\/blob\/main\/(.+)$/)?.[1];
    expect(page).toBe("docs/http-api.md");
  });

  it("keeps the example problem body of docs/http-api.md in step with the code", () => {
    const { body } = renderProblem(new ChannelError("invalid_message", "x", { status: 400 }));
    expect(httpApi).toContain(`"type": "${(JSON.parse(body) as { type: string }).type}"`);
  });
});
