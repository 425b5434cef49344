/**
 * Requests pipelined on one keep-alive connection (sent before the answers to earlier ones): each
 * is answered in order, and none is taken behind a refusal that closes the connection, since its
 * client would never get the 200 of a message that is then delivered (and would send it again).
 */
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ReceivedReply } from "../../../src/node/receiver/sample-receiver.js";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { openRawClient, rawPost, statusLines } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** In memory; on Postgres, where a 401 waits for the count of failed authentications in the database. */
async function start(onPostgres = false): Promise<{ port: number; replies: ReceivedReply[] }> {
  harness = onPostgres
    ? await startHarness(
        {},
        {},
        { postgres_url_env: "DATABASE_URL" },
        { DATABASE_URL: await createTestDatabase(inject("postgresUrl")) },
      )
    : await startHarness();
  return { port: Number(new URL(harness.baseUrl).port), replies: harness.replies };
}

/** A message of one conversation ("pipeliner"), with the right secret unless `headers` say otherwise. */
const post = (text: string, headers: Record<string, string> = {}): string =>
  rawPost(JSON.stringify({ sender_id: "pipeliner", text }), { authorization: `Bearer ${SECRET}`, ...headers });

const textOf = (reply: ReceivedReply): unknown => (reply.body as { text?: unknown }).text;

describe("pipelined requests on the Node listener", () => {
  it("answers each in order and delivers each", async () => {
    const { port, replies } = await start();
    const raw = await openRawClient(port);
    raw.socket.write(post("one") + post("two") + post("three"));
    await waitFor(() => (statusLines(raw.received()).length === 3 ? true : undefined), 5_000, "three answers");
    expect(statusLines(raw.received())).toEqual(["HTTP/1.1 200 ", "HTTP/1.1 200 ", "HTTP/1.1 200 "]);
    await waitFor(() => (replies.length === 3 ? true : undefined), 5_000, "three replies");
    expect(replies.map(textOf)).toEqual(["one", "two", "three"]);
    expect(raw.isOpen()).toBe(true);
    raw.socket.destroy();
  });

  it("answers a message sent behind a 401 that waited for Postgres to count it, once the body was read", async () => {
    // The refusal is written once the count answered, when the whole first request was read: it
    // keeps the connection open, and the message behind it is answered and delivered in turn.
    const { port, replies } = await start(true);
    const raw = await openRawClient(port);
    raw.socket.write(post("refused", { authorization: "Bearer wrong-guess" }) + post("behind it"));
    await waitFor(() => (statusLines(raw.received()).length === 2 ? true : undefined), 10_000, "two answers");
    expect(statusLines(raw.received())).toEqual(["HTTP/1.1 401 ", "HTTP/1.1 200 "]);
    await waitFor(() => (replies.length > 0 ? true : undefined), 10_000, "a reply");
    expect(replies.map(textOf)).toEqual(["behind it"]);
    raw.socket.destroy();
  });

  it.each([
    ["a wrong secret", { authorization: "Bearer wrong-guess" }, 401],
    ["a wrong media type", { "content-type": "text/plain" }, 415],
  ])("takes nothing sent behind %s, whose answer closes the connection", async (_what, headers, status) => {
    const { port, replies } = await start();
    const raw = await openRawClient(port);
    raw.socket.write(post("refused", headers) + post("behind it"));
    await raw.closed;
    expect(statusLines(raw.received())).toEqual([`HTTP/1.1 ${status} `]);

    // The same conversation again: had the message behind the refusal been taken, its reply
    // would come first, as sequence 1.
    const again = await openRawClient(port);
    again.socket.write(post("after"));
    await waitFor(() => (replies.length > 0 ? true : undefined), 5_000, "a reply");
    expect(replies.map(textOf)).toEqual(["after"]);
    expect(replies[0]?.body).toMatchObject({ sequence: 1 });
    again.socket.destroy();
  });
});
