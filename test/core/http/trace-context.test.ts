import { describe, expect, it } from "vitest";
import {
  childTraceparent,
  MAX_TRACESTATE_LENGTH,
  newTraceContext,
  parseTraceContext,
  readTraceContext,
  traceHeaders,
} from "../../../src/core/http/trace-context.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const VALID = `00-${TRACE_ID}-${PARENT_ID}-01`;

describe("parseTraceContext", () => {
  it("reads a valid version 00 traceparent", () => {
    expect(parseTraceContext(VALID, null)).toEqual({ traceId: TRACE_ID, parentId: PARENT_ID, flags: "01" });
  });

  it("keeps tracestate with a valid traceparent", () => {
    expect(parseTraceContext(VALID, "congo=t61rcWkgMzE")?.state).toBe("congo=t61rcWkgMzE");
  });

  it("drops tracestate when the traceparent is missing or invalid", () => {
    expect(parseTraceContext(null, "congo=t61rcWkgMzE")).toBeUndefined();
    expect(parseTraceContext("garbage", "congo=t61rcWkgMzE")).toBeUndefined();
  });

  it.each([
    ["all-zero trace id", `00-${"0".repeat(32)}-${PARENT_ID}-01`],
    ["all-zero parent id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["upper-case hex", `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`],
    ["a short trace id", `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`],
    ["version 00 with extra fields", `${VALID}-extra`],
    ["version ff", `ff-${TRACE_ID}-${PARENT_ID}-01`],
    ["non-hex flags", `00-${TRACE_ID}-${PARENT_ID}-zz`],
    ["wrong separators", `00_${TRACE_ID}_${PARENT_ID}_01`],
    ["an empty value", ""],
    ["a very long value", `01-${TRACE_ID}-${PARENT_ID}-01-${"a".repeat(600)}`],
  ])("ignores %s", (_name, value) => {
    expect(parseTraceContext(value, null)).toBeUndefined();
  });

  it("reads the first four fields of a later version leniently", () => {
    expect(parseTraceContext(`cc-${TRACE_ID}-${PARENT_ID}-01-what-the-future-adds`, null)).toEqual({
      traceId: TRACE_ID,
      parentId: PARENT_ID,
      flags: "01",
    });
    expect(parseTraceContext(`cc-${TRACE_ID}-${PARENT_ID}-01x`, null)).toBeUndefined();
  });

  it("drops a tracestate over the length cap and keeps one at it", () => {
    expect(parseTraceContext(VALID, "a".repeat(MAX_TRACESTATE_LENGTH + 1))?.state).toBeUndefined();
    expect(parseTraceContext(VALID, "a".repeat(MAX_TRACESTATE_LENGTH))?.state).toHaveLength(MAX_TRACESTATE_LENGTH);
  });
});

describe("childTraceparent", () => {
  it("keeps the trace id and flags and makes a new span id each time", () => {
    const trace = { traceId: TRACE_ID, parentId: PARENT_ID, flags: "01" };
    const first = parseTraceContext(childTraceparent(trace), null);
    const second = parseTraceContext(childTraceparent(trace), null);
    expect(first?.traceId).toBe(TRACE_ID);
    expect(first?.flags).toBe("01");
    expect(first?.parentId).not.toBe(PARENT_ID);
    expect(second?.parentId).not.toBe(first?.parentId);
  });

  it("passes tracestate on with the traceparent", () => {
    const headers = traceHeaders({ traceId: TRACE_ID, parentId: PARENT_ID, flags: "00", state: "k=v" });
    expect(headers.tracestate).toBe("k=v");
    expect(headers.traceparent).toMatch(new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-00$`));
    expect(traceHeaders(undefined)).toEqual({});
  });
});

describe("newTraceContext", () => {
  it("makes a valid, unsampled trace that survives a JSON round trip", () => {
    const trace = newTraceContext();
    expect(parseTraceContext(`00-${trace.traceId}-${trace.parentId}-${trace.flags}`, null)).toEqual(trace);
    expect(readTraceContext(JSON.parse(JSON.stringify(trace)))).toEqual(trace);
    expect(newTraceContext().traceId).not.toBe(trace.traceId);
  });

  it("draws ids of every hex digit, distinct across many refills of its random pool", () => {
    const traces = Array.from({ length: 2_000 }, () => newTraceContext());
    const ids = traces.flatMap((trace) => [trace.traceId, trace.parentId]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const trace of traces) {
      expect(trace.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(trace.parentId).toMatch(/^[0-9a-f]{16}$/);
    }
    expect(new Set(ids.join(""))).toEqual(new Set("0123456789abcdef"));
  });

  it("rejects a stored trace that is not one", () => {
    expect(readTraceContext({ traceId: "x", parentId: PARENT_ID, flags: "01" })).toBeUndefined();
    expect(readTraceContext("nope")).toBeUndefined();
  });
});
