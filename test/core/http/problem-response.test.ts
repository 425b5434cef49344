import { describe, expect, it } from "vitest";
import { bufferFullError } from "../../../src/core/app/refusals.js";
import { ChannelError } from "../../../src/core/channel-error.js";
import { renderProblem } from "../../../src/core/http/problem-response.js";
import { checkJsonContentType, unauthorizedError } from "../../../src/core/http/request-checks.js";

function thrownBy(check: () => void): ChannelError {
  try {
    check();
  } catch (error) {
    if (error instanceof ChannelError) return error;
  }
  throw new Error("the check passed");
}

describe("renderProblem", () => {
  it("answers a full buffer with one shared, immutable problem: code, Retry-After and problem+json", () => {
    const first = renderProblem(bufferFullError());
    const again = renderProblem(bufferFullError());
    expect(again).toBe(first);
    expect(Object.isFrozen(first) && Object.isFrozen(first.headers)).toBe(true);
    expect(first.status).toBe(503);
    expect(first.headers).toEqual({ "content-type": "application/problem+json", "retry-after": "1" });
    expect(JSON.parse(first.body)).toMatchObject({ status: 503, code: "buffer_full", title: "Inbound Buffer Full" });
    expect(() => {
      (bufferFullError() as { message: string }).message = "changed";
    }).toThrow(TypeError);
  });

  it.each([
    ["401", () => unauthorizedError(), 401, { "www-authenticate": 'Bearer realm="webhook-channel"' }],
    ["415", () => thrownBy(() => checkJsonContentType("text/plain")), 415, {}],
  ] as const)("answers every %s with the same frozen problem", (_name, make, status, headers) => {
    const error = make();
    expect(make()).toBe(error);
    expect(Object.isFrozen(error)).toBe(true);
    const parts = renderProblem(error);
    expect(renderProblem(make())).toBe(parts);
    expect(parts.status).toBe(status);
    expect(parts.headers).toEqual({ "content-type": "application/problem+json", ...headers });
  });

  it("renders an error with extra headers, or one that is not frozen, afresh each time", () => {
    const withExtra = renderProblem(bufferFullError(), { connection: "close" });
    expect(withExtra.headers).toMatchObject({ connection: "close", "retry-after": "1" });
    expect(renderProblem(bufferFullError()).headers).not.toHaveProperty("connection");
    const own = new ChannelError("invalid_json", "The body is not JSON.", { status: 400 });
    const parts = renderProblem(own);
    expect(renderProblem(own)).not.toBe(parts);
    expect(JSON.parse(parts.body)).toMatchObject({ detail: "The body is not JSON.", code: "invalid_json" });
  });
});
