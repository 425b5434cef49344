/**
 * Requests pipelined on one keep-alive connection (sent before the answers to earlier ones): each
 * is answered in order, and none is taken behind a refusal that closes the connection, since its
 * client would never get the 200 of a message that is then delivered (and would send it again).
 */
import { mkdtempSync } from "node:fs";
import { IncomingMessage, Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, inject, it } from "vitest";
import type { ReceivedReply } from "../../../src/node/receiver/sample-receiver.js";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { createTestDatabase } from "../../support/postgres-cluster.js";
import { openRawClient, rawPost, statusLines } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";
import { sample, scrape } from "../metrics/scrape.js";

let harness: ServiceHarness | undefined;
const emit = Server.prototype.emit;

afterEach(async () => {
  Server.prototype.emit = emit;
  await harness?.close();
  harness = undefined;
});

/**
 * In memory; on Postgres, where a 401 waits for the count of failed authentications in the
 * database; with `state_dir`, where a 200 waits for the commit that holds its message.
 */
async function start(
  state: "memory" | "postgres" | "state_dir" = "memory",
): Promise<{ port: number; replies: ReceivedReply[]; harness: ServiceHarness }> {
  const started =
    state === "postgres"
      ? await startHarness(
          {},
          {},
          { postgres_url_env: "DATABASE_URL" },
          { DATABASE_URL: await createTestDatabase(inject("postgresUrl")) },
        )
      : state === "state_dir"
        ? await startHarness({}, {}, { state_dir: mkdtempSync(join(tmpdir(), "webhook-channel-pipelined-")) })
        : await startHarness();
  harness = started;
  return { port: Number(new URL(started.baseUrl).port), replies: started.replies, harness: started };
}

/** A message of one conversation ("pipeliner"), with the right secret unless `headers` say otherwise. */
const post = (text: string, headers: Record<string, string> = {}): string =>
  rawPost(JSON.stringify({ sender_id: "pipeliner", text }), { authorization: `Bearer ${SECRET}`, ...headers });

const textOf = (reply: ReceivedReply): unknown => (reply.body as { text?: unknown }).text;

describe("pipelined requests on the Node listener", () => {
  it.each(["memory", "state_dir"] as const)("answers each in order, counts and delivers each (%s)", async (state) => {
    const { port, replies, harness: running } = await start(state);
    const raw = await openRawClient(port);
    raw.socket.write(post("one") + post("two") + post("three"));
    await waitFor(() => (statusLines(raw.received()).length === 3 ? true : undefined), 5_000, "three answers");
    expect(statusLines(raw.received())).toEqual(["HTTP/1.1 200 ", "HTTP/1.1 200 ", "HTTP/1.1 200 "]);
    await waitFor(() => (replies.length === 3 ? true : undefined), 5_000, "three replies");
    expect(replies.map(textOf)).toEqual(["one", "two", "three"]);
    expect(raw.isOpen()).toBe(true);
    raw.socket.destroy();
    // A 200 queued behind another one's commit has no socket of its own yet: counted all the same.
    const metrics = await scrape(running.baseUrl);
    expect(sample(metrics, "webhook_channel_requests_total", { channel: "webhook", code: "200" })).toBe(3);
  });

  it("answers a message sent behind a 401 that waited for Postgres to count it, once the body was read", async () => {
    // The refusal is written once the count answered, when the whole first request was read: it
    // keeps the connection open, and the message behind it is answered and delivered in turn.
    const { port, replies } = await start("postgres");
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

  it.each([
    ["a wrong secret", { authorization: "Bearer wrong-guess" }, 401],
    ["a wrong media type", { "content-type": "text/plain" }, 415],
  ])(
    "takes nothing sent behind %s whose answer waits, closing, behind a 200's commit (state_dir)",
    async (_what, headers, status) => {
      const { port, replies } = await start("state_dir");
      const raw = await openRawClient(port);
      raw.socket.write(post("first") + post("refused", headers) + post("behind it"));
      await raw.closed;
      expect(statusLines(raw.received())).toEqual(["HTTP/1.1 200 ", `HTTP/1.1 ${status} `]);

      // Had the message behind the refusal been taken, its reply would come second, as sequence 2.
      const again = await openRawClient(port);
      again.socket.write(post("after"));
      await waitFor(() => (replies.length > 1 ? true : undefined), 5_000, "two replies");
      expect(replies.map(textOf)).toEqual(["first", "after"]);
      expect(replies[1]?.body).toMatchObject({ sequence: 2 });
      again.socket.destroy();
    },
  );

  it("answers every message it took on a connection before a stop closes it (state_dir)", async () => {
    const { port, harness: running } = await start("state_dir");
    let stopped: Promise<unknown> | undefined;
    // The stop begins once both requests were read and taken, before their commit, which
    // state_dir runs on a later turn.
    Server.prototype.emit = function (this: Server, event: string, ...args: unknown[]) {
      const request = args[0];
      if (event === "request" && request instanceof IncomingMessage && request.headers["x-last"] === "1") {
        setImmediate(() => {
          stopped = running.service.stop(5_000);
        });
      }
      return Reflect.apply(emit, this, [event, ...args]) as boolean;
    } as typeof Server.prototype.emit;
    const raw = await openRawClient(port);
    raw.socket.write(post("first") + post("second", { "x-last": "1" }));
    await raw.closed;
    await stopped;
    harness = undefined;
    expect(statusLines(raw.received())).toEqual(["HTTP/1.1 200 ", "HTTP/1.1 200 "]);
  });
});
