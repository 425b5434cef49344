import { describe, expect, it } from "vitest";
import { bufferFullError } from "../../../src/core/app/refusals.js";
import { ChannelError } from "../../../src/core/channel-error.js";
import { renderProblem } from "../../../src/core/http/problem-response.js";

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
