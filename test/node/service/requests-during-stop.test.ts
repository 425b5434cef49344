/**
 * A message whose body is still arriving when a stop begins: it gets the 503 `shutting_down` that
 * a new request gets, and its connection closes, both while accepted messages drain and once the
 * listeners close. It is never accepted after the stop began (the stop would list it as left),
 * and never cut off without an answer (its client could not tell whether it was taken).
 */
import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { openRawClient, type RawClient, rawPost, statusLines } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const BODY = JSON.stringify({ sender_id: "late", text: "sent as the stop begins" });
// With `Expect: 100-continue`, so that the test knows when the head passed its checks.
const HEAD = rawPost("", {
  authorization: `Bearer ${SECRET}`,
  expect: "100-continue",
  "content-length": String(BODY.length),
});

/** Sends a message's head and waits until the service checked it and asks for the body. */
async function sendTheHead(active: ServiceHarness): Promise<RawClient> {
  const raw = await openRawClient(Number(new URL(active.baseUrl).port));
  raw.socket.write(HEAD);
  await waitFor(() => (raw.received().startsWith("HTTP/1.1 100 Continue") ? true : undefined), 5_000, "100 Continue");
  return raw;
}

/** The answer's status line, its connection header and its problem code. */
function answerOf(received: string): { status: string[]; closes: boolean; code: string | undefined } {
  return {
    status: statusLines(received).filter((line) => line !== "HTTP/1.1 100 "),
    closes: /^connection: close\r$/im.test(received),
    // Read from the text: a problem may come in chunks.
    code: /"code":"([a-z_]+)"/.exec(received)?.[1],
  };
}

/** Resolves once the port takes no new connection: the listener is closing. */
function refusesConnections(port: number): Promise<boolean | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once("error", () => resolve(true));
  });
}

describe("a message still arriving when the service stops", () => {
  it("is refused 503 shutting_down while accepted messages drain, not accepted", async () => {
    // A reply that never gets an answer keeps the stop draining until its timeout.
    const active = await startHarness({ delivery: { timeout_ms: 60_000 } }, { status: () => "hang" });
    harness = active;
    expect((await active.post({ sender_id: "first", text: "held" })).status).toBe(200);
    const raw = await sendTheHead(active);
    const stopping = active.service.stop(500);
    raw.socket.write(BODY);
    await raw.closed;
    expect(answerOf(raw.received())).toEqual({ status: ["HTTP/1.1 503 "], closes: true, code: "shutting_down" });
    // Only the message accepted before the stop is left.
    expect((await stopping).left).toHaveLength(1);
  });

  it("is answered 503 shutting_down once the listeners close, not cut off", async () => {
    const active = await startHarness();
    harness = active;
    const port = Number(new URL(active.baseUrl).port);
    const raw = await sendTheHead(active);
    const stopping = active.service.stop(5_000);
    await waitFor(() => refusesConnections(port), 5_000, "the listener to close");
    raw.socket.write(BODY);
    await raw.closed;
    expect(answerOf(raw.received())).toEqual({ status: ["HTTP/1.1 503 "], closes: true, code: "shutting_down" });
    expect((await stopping).left).toEqual([]);
    expect(active.replies).toEqual([]);
  });
});
