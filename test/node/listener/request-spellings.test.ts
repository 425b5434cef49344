/**
 * Requests the Node listener reads however the client spelled them: without `Host`, with a
 * header repeated, with a path the router only matches once normalized. Each gets the answer
 * the same message gets in its plain spelling, and a problem document when refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { openRawClient, type RawClient } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;
let raw: RawClient | undefined;

afterEach(async () => {
  raw?.socket.destroy();
  await harness?.close();
  harness = undefined;
  raw = undefined;
});

const BODY = JSON.stringify({ sender_id: "speller", text: "hi" });

/** Request bytes: the request line, then each header line as given (repeats kept), then `body`. */
function request(line: string, headers: readonly (readonly [string, string])[], body = ""): string {
  return `${line}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join("")}\r\n${body}`;
}

const message = (extra: readonly (readonly [string, string])[] = []): (readonly [string, string])[] => [
  ["Host", "localhost"],
  ["Authorization", `Bearer ${SECRET}`],
  ["Content-Type", "application/json"],
  ["Content-Length", String(Buffer.byteLength(BODY))],
  ...extra,
];

/** True once `received` holds a whole answer: its head, then its Content-Length's bytes or its last chunk. */
function isWhole(received: string): boolean {
  const end = received.indexOf("\r\n\r\n");
  const length = /\r\ncontent-length: (\d+)/i.exec(received.slice(0, end))?.[1];
  if (end === -1) return false;
  if (length === undefined) return received.endsWith("\r\n0\r\n\r\n");
  return received.length - end - 4 >= Number(length);
}

/** Sends `bytes` on a new connection; resolves with what came back once `done` holds of it. */
async function exchange(bytes: string, done: (received: string) => boolean = isWhole): Promise<string> {
  harness ??= await startHarness();
  raw = await openRawClient(Number(new URL(harness.baseUrl).port));
  raw.socket.write(bytes);
  const client = raw;
  return waitFor(() => (done(client.received()) ? client.received() : undefined), 5_000, "an answer");
}

const problemCode = (answer: string): unknown =>
  (JSON.parse(answer.slice(answer.indexOf("{"), answer.lastIndexOf("}") + 1)) as { code?: unknown }).code;

describe("the Node listener, whatever the request's spelling", () => {
  it.each([
    ["POST /webhook HTTP/1.1", message().filter(([name]) => name !== "Host"), BODY],
    ["GET /healthz HTTP/1.1", [], ""],
  ])("refuses an HTTP/1.1 request without Host as a 400 bad_request problem: %s", async (line, headers, body) => {
    const answer = await exchange(request(line, headers, body));
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer.toLowerCase()).toContain("content-type: application/problem+json");
    expect(problemCode(answer)).toBe("bad_request");
    expect(harness?.service.listeners).toBeDefined();
  });

  it("accepts an HTTP/1.0 message without Host, as HTTP/1.0 allows", async () => {
    const answer = await exchange(request("POST /webhook HTTP/1.0", message().slice(1), BODY));
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it.each([
    ["Authorization", `Bearer ${SECRET}`, "Bearer wrong-guess", 401, "unauthorized"],
    ["Content-Type", "application/json", "text/plain", 415, "unsupported_media_type"],
  ])(
    "reads a repeated %s with every line, as Web Headers do: the first right one alone is not enough",
    async (name, first, second, status, code) => {
      const headers = message().filter(([field]) => field !== name);
      const answer = await exchange(
        request("POST /webhook HTTP/1.1", [...headers, [name, first], [name, second]], BODY),
      );
      expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(problemCode(answer)).toBe(code);
    },
  );

  it.each(["/x/../webhook", "/%77ebhook", "/./webhook", "http://localhost/webhook"])(
    "takes %s as the channel's path: 100 Continue, then 200, and the reply is delivered",
    async (target) => {
      harness = await startHarness();
      const head = request(`POST ${target} HTTP/1.1`, message([["Expect", "100-continue"]]));
      const continued = await exchange(head, (received) => received.includes("\r\n\r\n"));
      expect(continued).toBe("HTTP/1.1 100 Continue\r\n\r\n");
      raw?.socket.write(BODY);
      const client = raw;
      const answer = await waitFor(
        () =>
          client !== undefined && isWhole(client.received().slice(continued.length)) ? client.received() : undefined,
        5_000,
        "the 200",
      );
      expect(answer.slice(continued.length)).toMatch(/^HTTP\/1\.1 200 /);
      const replies = harness.replies;
      await waitFor(() => (replies.length === 1 ? true : undefined), 5_000, "the reply");
    },
  );

  it.each([
    ["POST /a\\..\\webhook HTTP/1.1", message(), BODY, 200],
    // `//healthz`, which no route has: a 404 problem, as under workerd, not an empty 400.
    ["GET /\\healthz HTTP/1.1", [["Host", "localhost"]] as const, "", 404],
  ])("reads a backslash in %s as a slash, as a URL parser and Workers do", async (line, headers, body, status) => {
    const answer = await exchange(request(line, headers, body));
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  });

  it.each(["resets", "closes"])(
    "answers a body cut short on a normalized path as the client's doing, at once, with no error line, when the client %s",
    async (how) => {
      harness = await startHarness();
      const head = request("POST /x/../webhook HTTP/1.1", message());
      raw = await openRawClient(Number(new URL(harness.baseUrl).port));
      raw.socket.write(`${head}{"sender_id":`);
      if (how === "resets") raw.socket.resetAndDestroy();
      else raw.socket.end();
      // The request is counted once the service saw it end: as the client's 400, or as a 500.
      const { baseUrl } = harness;
      const counted = await waitFor(
        async () => {
          const text = await (await fetch(`${baseUrl}/metrics`)).text();
          return /requests_total\{[^}]*code="(400|500)"/.test(text) ? text : undefined;
        },
        // Well short of the grace an answer under way gets before its connection is cut.
        2_000,
        "the cut-short request counted",
      );
      expect(counted).not.toMatch(/requests_total\{[^}]*code="500"/);
      await raw.closed;
      expect(harness.logs.filter((line) => line.level === "error")).toEqual([]);
    },
  );
});
