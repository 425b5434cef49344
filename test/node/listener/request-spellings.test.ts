/**
 * Requests the Node listener reads however the client spelled them: without `Host`, with a
 * header repeated, with a path the router only matches once normalized. Each gets the answer
 * the same message gets in its plain spelling, and a problem document when refused.
 */
import { afterEach, describe, expect, it } from "vitest";
import { slashBackslashes } from "../../../src/node/listener/channel-path.js";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { openRawClient, type RawClient } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";
import { sample, scrape } from "../metrics/scrape.js";

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
    // The message's refusal is the channel's answer, counted as such; the health check's is none.
    const text = await scrape(harness?.baseUrl ?? "");
    const counted = sample(text, "webhook_channel_requests_total", { channel: "webhook", code: "400" });
    expect(counted).toBe(line.startsWith("POST") ? 1 : undefined);
  });

  it("counts an Expect it does not meet as the channel's 417", async () => {
    const answer = await exchange(request("POST /webhook HTTP/1.1", message([["Expect", "tea"]]), BODY));
    expect(answer).toMatch(/^HTTP\/1\.1 417 /);
    const text = await scrape(harness?.baseUrl ?? "");
    expect(sample(text, "webhook_channel_requests_total", { channel: "webhook", code: "417" })).toBe(1);
  });

  it.each(["gzip, chunked", "x-custom, chunked"])(
    "refuses a body in Transfer-Encoding %s as a 501 not_implemented problem, counted as the channel's",
    async (codings) => {
      const headers = message().filter(([name]) => name !== "Content-Length");
      const chunk = `${Buffer.byteLength(BODY).toString(16)}\r\n${BODY}\r\n0\r\n\r\n`;
      const answer = await exchange(
        request("POST /webhook HTTP/1.1", [...headers, ["Transfer-Encoding", codings]], chunk),
      );
      expect(answer).toMatch(/^HTTP\/1\.1 501 /);
      expect(answer.toLowerCase()).toContain("connection: close");
      expect(problemCode(answer)).toBe("not_implemented");
      const text = await scrape(harness?.baseUrl ?? "");
      expect(sample(text, "webhook_channel_requests_total", { channel: "webhook", code: "501" })).toBe(1);
      expect(harness?.replies).toHaveLength(0);
    },
  );

  it("accepts a body in Transfer-Encoding chunked alone", async () => {
    const headers = message().filter(([name]) => name !== "Content-Length");
    const chunk = `${Buffer.byteLength(BODY).toString(16)}\r\n${BODY}\r\n0\r\n\r\n`;
    const answer = await exchange(
      request("POST /webhook HTTP/1.1", [...headers, ["Transfer-Encoding", "Chunked"]], chunk),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it.each(["GET /healthz HTTP/1.0", "GET /readyz HTTP/1.0"])(
    "answers %s without Host, as HTTP/1.0 allows (a health checker's default)",
    async (line) => {
      const answer = await exchange(request(line, []));
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    },
  );

  it.each(["GET /healthz HTTP/1.1", "GET /nowhere HTTP/1.1"])(
    "refuses %s with a Host it cannot read as a 400 bad_request problem, not an empty 400",
    async (line) => {
      const answer = await exchange(request(line, [["Host", "a b"]]));
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(answer.toLowerCase()).toContain("content-type: application/problem+json");
      expect(answer.toLowerCase()).toContain("connection: close");
      expect(problemCode(answer)).toBe("bad_request");
    },
  );

  it("refuses a transfer coding other than chunked on the app's routes too (an admin request's body)", async () => {
    const chunk = `2\r\n{}\r\n0\r\n\r\n`;
    const answer = await exchange(
      request(
        "POST /admin/dead-letters/replay HTTP/1.1",
        [
          ["Host", "localhost"],
          ["Authorization", "Bearer not-checked-before-the-coding"],
          ["Transfer-Encoding", "gzip, chunked"],
        ],
        chunk,
      ),
    );
    expect(answer).toMatch(/^HTTP\/1\.1 501 /);
    expect(problemCode(answer)).toBe("not_implemented");
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

  it("keeps a backslash in the query as it came, reading only the path's as a slash", () => {
    const request = { url: "/a\\..\\webhook?next=\\x" };
    slashBackslashes(request);
    expect(request.url).toBe("/a/../webhook?next=\\x");
    slashBackslashes(request);
    expect(request.url).toBe("/a/../webhook?next=\\x");
  });

  it.each([
    ["POST /a\\..\\webhook HTTP/1.1", message(), BODY, 200],
    // `//healthz`, which no route has: a 404 problem, as under workerd, not an empty 400.
    ["GET /\\healthz HTTP/1.1", [["Host", "localhost"]] as const, "", 404],
  ])("reads a backslash in %s as a slash, as a URL parser and Workers do", async (line, headers, body, status) => {
    const answer = await exchange(request(line, headers, body));
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
  });

  it("lets a body cut short on a normalized path go at once, as the client's doing, with no error line", async () => {
    harness = await startHarness();
    const head = request("POST /x/../webhook HTTP/1.1", message());
    raw = await openRawClient(Number(new URL(harness.baseUrl).port));
    raw.socket.write(`${head}{"sender_id":`);
    const closedAt = Date.now();
    raw.socket.end();
    // The service closes its side once it read the end: well short of the grace an answer under
    // way gets before its connection is cut.
    expect((await raw.closed) - closedAt).toBeLessThan(2_000);
    const text = await scrape(harness.baseUrl);
    // Nothing was answered, so nothing is counted: neither a 400 nor an internal error's 500.
    expect(text).not.toMatch(/requests_total\{[^}]*code="(400|500)"/);
    expect(harness.logs.filter((line) => line.level === "error")).toEqual([]);
  });
});
