import { request as httpRequest } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const MIB = 1_048_576;
let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

/** POSTs a body in chunks without Content-Length (Transfer-Encoding: chunked). */
function postChunked(url: string, chunks: number, chunkSize: number): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method: "POST",
      headers: { authorization: "Bearer test-secret-0123456789", "content-type": "application/json" },
    });
    request.on("response", (response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => {
        body += chunk.toString();
      });
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body }));
    });
    // The server may answer and close before every chunk is written.
    request.on("error", (error) => (request.writableEnded ? undefined : reject(error)));
    const chunk = Buffer.alloc(chunkSize, "a");
    let sent = 0;
    const writeNext = (): void => {
      while (sent < chunks) {
        sent += 1;
        if (!request.write(chunk)) {
          request.once("drain", writeNext);
          return;
        }
      }
      request.end('"}');
    };
    request.write('{"sender_id":"a","text":"');
    writeNext();
  });
}

/** A JSON message whose serialized size is exactly `size` bytes. */
function messageOfSize(size: number): string {
  const shell = '{"sender_id":"a","text":""}';
  return `{"sender_id":"a","text":"${"x".repeat(size - shell.length)}"}`;
}

describe("the Node service", () => {
  it("delivers the echo reply of an accepted message to the receiver", async () => {
    harness = await startHarness();
    const response = await harness.post({ sender_id: "alice", text: "hello", conversation_id: "t1" });
    expect(response.status).toBe(200);
    const accepted = (await response.json()) as { status: string; message_id: string; conversation_id: string };
    expect(accepted).toEqual({ status: "accepted", message_id: expect.any(String), conversation_id: "t1" });
    const replies = harness.replies;
    const reply = await waitFor(() => replies[0], 5_000, "the reply");
    expect(reply.body).toEqual({
      message_id: expect.any(String),
      in_reply_to: accepted.message_id,
      conversation_id: "t1",
      recipient_id: "alice",
      text: "hello",
      sequence: 1,
      brain: "echo",
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(reply.headers["content-type"]).toBe("application/json");
    expect(reply.headers["user-agent"]).toBe("webhook-channel/0.1.0");
    expect(reply.headers["webhook-id"]).toBe((reply.body as { message_id: string }).message_id);
  });

  it("rejects a body over 1 MiB sent without Content-Length", async () => {
    harness = await startHarness();
    const { status, body } = await postChunked(`${harness.baseUrl}/webhook`, 17, 64 * 1024);
    expect(status).toBe(413);
    expect(JSON.parse(body)).toMatchObject({ code: "payload_too_large", status: 413 });
  });

  it("reads a chunked body under 1 MiB whole", async () => {
    harness = await startHarness();
    const { status } = await postChunked(`${harness.baseUrl}/webhook`, 4, 1024);
    expect(status).toBe(200);
    const replies = harness.replies;
    const reply = await waitFor(() => replies[0], 5_000, "the reply");
    expect((reply.body as { text: string }).text).toBe("a".repeat(4096));
  });

  it("accepts a body of exactly 1 MiB and rejects one byte more", async () => {
    harness = await startHarness();
    const exact = messageOfSize(MIB);
    expect(Buffer.byteLength(exact)).toBe(MIB);
    expect((await harness.post(exact)).status).toBe(200);
    const over = await harness.post(messageOfSize(MIB + 1));
    expect(over.status).toBe(413);
    expect(over.headers.get("content-type")).toBe("application/problem+json");
  });

  it("applies the mapping to the inbound message and to the reply", async () => {
    harness = await startHarness({ mapping: { text: "message", conversation_id: "thread", sender_id: "from" } });
    const response = await harness.post({ from: "bob", message: "hi there", thread: "th-7", text: "not read" });
    expect(await response.json()).toMatchObject({ status: "accepted", conversation_id: "th-7" });
    const replies = harness.replies;
    const reply = await waitFor(() => replies[0], 5_000, "the reply");
    expect(reply.body).toMatchObject({ thread: "th-7", message: "hi there", recipient_id: "bob" });
    expect(reply.body).not.toHaveProperty("text");
    expect(reply.body).not.toHaveProperty("conversation_id");
  });

  it("answers 503 with Retry-After when the buffer is full behind a receiver that never answers", async () => {
    harness = await startHarness({ buffer_capacity: 2, delivery: { timeout_ms: 60_000 } }, { status: () => "hang" });
    expect((await harness.post({ sender_id: "a", text: "1" })).status).toBe(200);
    expect((await harness.post({ sender_id: "b", text: "2" })).status).toBe(200);
    const full = await harness.post({ sender_id: "c", text: "3" });
    expect(full.status).toBe(503);
    expect(full.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(await full.json()).toMatchObject({ code: "buffer_full", status: 503 });
  });

  it("logs a failed delivery with its status and keeps serving", async () => {
    harness = await startHarness(
      { delivery: { initial_delay_ms: 10, max_delay_ms: 10, max_attempts: 2 } },
      { status: () => 500 },
    );
    expect((await harness.post({ sender_id: "a", text: "x" })).status).toBe(200);
    const logs = harness.logs;
    const retry = await waitFor(() => logs.find((line) => line.level === "warn"), 5_000, "the retry line");
    expect(retry).toMatchObject({ code: "delivery_failed", status: 500, message_id: expect.any(String), attempts: 1 });
    const failure = await waitFor(() => logs.find((line) => line.level === "error"), 5_000, "the error line");
    expect(failure).toMatchObject({
      code: "delivery_failed",
      status: 500,
      message_id: expect.any(String),
      attempts: 2,
    });
    expect((await harness.post({ sender_id: "a", text: "y" })).status).toBe(200);
  });

  it("answers 503 shutting_down to new requests once shutdown began", async () => {
    harness = await startHarness({ delivery: { timeout_ms: 60_000 } }, { status: () => "hang" });
    expect((await harness.post({ sender_id: "a", text: "x" })).status).toBe(200);
    const stopping = harness.service.stop(300);
    const refused = await harness.post({ sender_id: "a", text: "y" });
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(await refused.json()).toMatchObject({ code: "shutting_down" });
    expect(await stopping).toMatchObject({ left: [expect.any(String)], fate: "lost" });
  });

  it("logs message text only at debug level", async () => {
    harness = await startHarness();
    await harness.post({ sender_id: "a", text: "private words" });
    const replies = harness.replies;
    await waitFor(() => replies[0], 5_000, "the reply");
    const withText = harness.logs.filter((line) => JSON.stringify(line).includes("private words"));
    expect(withText.length).toBeGreaterThan(0);
    expect(withText.every((line) => line.level === "debug")).toBe(true);
    expect(JSON.stringify(harness.logs)).not.toContain("test-secret-0123456789");
  });

  it("warns at startup about a non-loopback bind", async () => {
    harness = await startHarness({ bind: "0.0.0.0:0" });
    expect(harness.logs).toContainEqual(
      expect.objectContaining({ level: "warn", msg: expect.stringContaining("cleartext"), bind: "0.0.0.0:0" }),
    );
  });

  it("logs no such warning for a loopback bind", async () => {
    harness = await startHarness();
    expect(harness.logs.filter((line) => line.level === "warn")).toEqual([]);
    expect(harness.logs).toContainEqual(
      expect.objectContaining({ msg: "listening", url: expect.stringContaining("/webhook") }),
    );
  });
});
