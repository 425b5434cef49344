import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { openRawClient, type RawClient, rawPost } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";
import { ADMIN, makeDeadLetters } from "./admin-requests.js";

let harness: ServiceHarness | undefined;
let raw: RawClient | undefined;

afterEach(async () => {
  raw?.socket.destroy();
  raw = undefined;
  await harness?.close();
  harness = undefined;
});

/** A service whose receiver refuses every reply (400), so that each message becomes a dead letter. */
async function start(): Promise<ServiceHarness> {
  harness = await startHarness(
    { delivery: { max_attempts: 1 } },
    { status: () => 400 },
    { admin: { token_env: "ADMIN_SECRET" } },
    { ADMIN_SECRET: ADMIN },
  );
  return harness;
}

/** The head of a bulk replay of `body` that waits for `100 Continue` before sending it. */
function replayHead(body: string, headers: Record<string, string> = {}): string {
  const request = rawPost(
    body,
    { authorization: `Bearer ${ADMIN}`, expect: "100-continue", ...headers },
    "/admin/dead-letters/replay",
  );
  return request.slice(0, request.length - Buffer.byteLength(body));
}

describe("Expect: 100-continue on the admin API's bulk replay (Node)", () => {
  it("asks an authenticated bulk replay for its body with 100 Continue, then replays", async () => {
    const h = await start();
    const [id] = await makeDeadLetters(h, ["expect"]);
    const body = JSON.stringify({ ids: [id] });
    raw = await openRawClient(Number(new URL(h.baseUrl).port));
    const client = raw;
    client.socket.write(replayHead(body));
    // RFC 9110 10.1.1: the server either answers at once or sends 100 (Continue). A client that
    // waits for it (as expect: 100-continue asks) otherwise waits until the server's request
    // timeout, and the replay never happens.
    await waitFor(() => (client.received().includes("\r\n\r\n") ? true : undefined), 5_000, "an answer to the head");
    expect(client.received()).toBe("HTTP/1.1 100 Continue\r\n\r\n");
    client.socket.write(body);
    await waitFor(() => (client.received().includes('"replayed"') ? true : undefined), 5_000, "the final answer");
    expect(client.received()).toMatch(/HTTP\/1\.1 202 Accepted\r\n[\s\S]*\{"replayed":1\}$/);
  });

  it("answers a wrong secret, or a declared body over 64 KiB, with its final status and no 100 Continue", async () => {
    const h = await start();
    const port = Number(new URL(h.baseUrl).port);
    for (const [headers, status] of [
      [{ authorization: "Bearer wrong-guess" }, 401],
      [{ "content-length": String(65_537) }, 413],
    ] as const) {
      const client = await openRawClient(port);
      raw = client;
      client.socket.write(replayHead("{}", headers));
      await client.closed;
      expect(client.received().startsWith(`HTTP/1.1 ${status} `)).toBe(true);
      expect(client.received()).not.toContain("HTTP/1.1 100");
    }
  });
});
