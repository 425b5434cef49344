import { describe, expect, it } from "vitest";
import { FETCH_BAD_PORTS, fetchBadPort } from "../../../src/core/http/fetch-bad-ports.js";

/** What this runtime's fetch says about a port of loopback: "bad port", or how the connection went. */
async function fetchVerdict(port: number): Promise<string> {
  try {
    await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(2_000) });
    return "answered";
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    return cause === "bad port" ? "bad port" : "not refused";
  }
}

describe("fetchBadPort", () => {
  it("holds every port this runtime's fetch refuses, and no port next to one", async () => {
    // Node's fetch predates the standard's refusal of port 0, which reaches no server anyway.
    const listed = FETCH_BAD_PORTS.filter((port) => port !== 0);
    const verdicts = await Promise.all(listed.map(fetchVerdict));
    expect(verdicts.every((verdict) => verdict === "bad port")).toBe(true);
    const neighbours = [...new Set(listed.flatMap((port) => [port - 1, port + 1]))].filter(
      (port) => port > 0 && !FETCH_BAD_PORTS.includes(port),
    );
    const others = await Promise.all(neighbours.map(fetchVerdict));
    expect(neighbours.filter((_port, index) => others[index] === "bad port")).toEqual([]);
  });

  it.each([
    ["http://127.0.0.1:6000/bot", "6000"],
    ["https://example.com:25/x", "25"],
    ["http://[::1]:0/x", "0"],
    ["http://127.0.0.1:6001/bot", undefined],
    ["http://example.com:80/x", undefined],
    ["https://example.com/x", undefined],
    ["ftp://example.com:21/x", undefined],
    ["not a url", undefined],
  ])("reads %s as %s", (url, port) => {
    expect(fetchBadPort(url)).toBe(port);
  });
});
