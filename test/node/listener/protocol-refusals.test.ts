/**
 * What Node's HTTP parser refuses before the service sees a request (a malformed request, headers
 * over its limit, an `Expect` it does not meet) is answered like every other refusal:
 * `application/problem+json` with a stable `code`, and the connection closes.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { openRawClient, statusLines } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const BODY = JSON.stringify({ sender_id: "a", text: "hi" });
const head = (lines: readonly string[], requestLine = "POST /webhook HTTP/1.1"): string =>
  [requestLine, "host: localhost", `authorization: Bearer ${SECRET}`, "content-type: application/json", ...lines]
    .join("\r\n")
    .concat("\r\n\r\n");

/** Sends `bytes` on a new connection and returns what came back once the server closed it. */
async function answerTo(bytes: string): Promise<string> {
  harness ??= await startHarness();
  const raw = await openRawClient(Number(new URL(harness.baseUrl).port));
  raw.socket.write(bytes);
  await raw.closed;
  return raw.received();
}

describe("refusals of Node's HTTP parser", () => {
  it.each([
    [
      "a method Node does not know",
      head([`content-length: ${BODY.length}`], "FOO /webhook HTTP/1.1") + BODY,
      400,
      "bad_request",
    ],
    ["two Content-Lengths", head([`content-length: ${BODY.length}`, "content-length: 3"]) + BODY, 400, "bad_request"],
    ["a negative Content-Length", head(["content-length: -1"]), 400, "bad_request"],
    [
      "headers over Node's limit",
      head([`x-padding: ${"p".repeat(20_000)}`, "content-length: 0"]),
      431,
      "headers_too_large",
    ],
    [
      "an Expect other than 100-continue",
      head([`content-length: ${BODY.length}`, "expect: foo"]) + BODY,
      417,
      "expectation_failed",
    ],
  ])("answers %s as a problem and closes the connection", async (_what, bytes, status, code) => {
    const answer = await answerTo(bytes);
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer).toMatch(/^content-type: application\/problem\+json\r$/im);
    expect(answer).toMatch(/^connection: close\r$/im);
    const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4)) as Record<string, unknown>;
    expect(body).toMatchObject({ status, code });
  });

  it("lets an answer under way go first, then closes, when what follows it cannot be read", async () => {
    // With state_dir a 200 waits for its commit: the malformed bytes behind it are read meanwhile.
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-refusals-"));
    try {
      const active = await startHarness({}, {}, { state_dir: stateDir });
      harness = active;
      const answer = await answerTo(`${head([`content-length: ${BODY.length}`])}${BODY}NOT HTTP AT ALL\r\n\r\n`);
      expect(statusLines(answer)).toEqual(["HTTP/1.1 200 "]);
      await waitFor(() => (active.replies.length > 0 ? true : undefined), 5_000, "the reply");
    } finally {
      await harness?.close();
      harness = undefined;
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("answers OPTIONS * (the server as a whole) 404 not_found as a problem", async () => {
    const answer = await answerTo("OPTIONS * HTTP/1.1\r\nhost: localhost\r\nconnection: close\r\n\r\n");
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(answer).toMatch(/^content-type: application\/problem\+json\r$/im);
    expect(answer).toContain('"code":"not_found"');
  });
});
