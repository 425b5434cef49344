import { connect } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";
import { SECRET } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const BODY = JSON.stringify({ sender_id: "alice", text: "hello" });

let service: RunningService | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  await service?.stop(1_000);
  await receiver?.close();
  service = undefined;
  receiver = undefined;
});

async function start(webhook: Record<string, unknown> = {}): Promise<number> {
  receiver = await startReceiver({ port: 0 });
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: receiver.url, ...webhook }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  service = await startService({
    config: result.config,
    secrets: new Map([["webhook", SECRET]]),
    logger: createLogSink("error").logger,
  });
  const port = service.listeners[0]?.port;
  if (port === undefined) throw new Error("no listener");
  return port;
}

/** A raw connection: what the server sent, byte for byte, and whether it closed. */
interface Raw {
  write(text: string): void;
  received(): string;
  readonly closed: Promise<void>;
}

function open(port: number): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    let data = "";
    socket.on("data", (chunk: Buffer) => {
      data += chunk.toString("latin1");
    });
    socket.on("error", () => undefined);
    const closed = new Promise<void>((done) => socket.once("close", () => done()));
    socket.once("connect", () => resolve({ write: (text) => socket.write(text), received: () => data, closed }));
    socket.once("error", reject);
  });
}

/** The head of a POST that waits for `100 Continue` before its body. */
function head(headers: Record<string, string>, path = "/webhook"): string {
  const lines = Object.entries({
    host: "localhost",
    authorization: `Bearer ${SECRET}`,
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(BODY)),
    expect: "100-continue",
    ...headers,
  }).map(([name, value]) => `${name}: ${value}`);
  return `POST ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n`;
}

/** Sends the head only, and returns everything the server answered before it closed. */
async function refusedWithoutBody(port: number, headers: Record<string, string>, path?: string): Promise<string> {
  const raw = await open(port);
  raw.write(head(headers, path));
  await raw.closed;
  return raw.received();
}

describe("Expect: 100-continue on the Node listener", () => {
  it("sends 100 Continue to a request that passes its checks, then 200 after the body", async () => {
    const port = await start();
    const raw = await open(port);
    raw.write(head({}));
    await waitFor(() => (raw.received().includes("\r\n\r\n") ? true : undefined), 5_000, "the interim answer");
    expect(raw.received()).toBe("HTTP/1.1 100 Continue\r\n\r\n");
    raw.write(BODY);
    await waitFor(() => (raw.received().includes('"accepted"') ? true : undefined), 5_000, "the final answer");
    const final = raw.received().slice("HTTP/1.1 100 Continue\r\n\r\n".length);
    expect(final).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
  });

  it.each([
    ["a wrong secret", { authorization: "Bearer wrong-guess" }, 401],
    ["no Authorization header", { authorization: "" }, 401],
    ["a wrong media type", { "content-type": "text/plain" }, 415],
    ["a Content-Length over 1 MiB", { "content-length": String(1_048_577) }, 413],
  ])("answers %s with its final status, never 100 Continue", async (_what, headers, status) => {
    const port = await start();
    const answer = await refusedWithoutBody(port, headers);
    expect(answer.startsWith(`HTTP/1.1 ${status} `)).toBe(true);
    expect(answer).not.toContain("HTTP/1.1 100");
    expect(answer).toMatch(/^connection: close\r$/im);
    expect(answer).toContain("application/problem+json");
  });

  it("answers an address over the auth-failure limit 429 without 100 Continue, even with the right secret", async () => {
    const port = await start({ trusted_proxies: ["127.0.0.1/32"] });
    for (let index = 0; index < 20; index += 1) {
      const answer = await refusedWithoutBody(port, {
        authorization: "Bearer wrong-guess",
        "x-forwarded-for": "198.51.100.7",
      });
      expect(answer.startsWith("HTTP/1.1 401 ")).toBe(true);
    }
    const answer = await refusedWithoutBody(port, { "x-forwarded-for": "198.51.100.7" });
    expect(answer.startsWith("HTTP/1.1 429 ")).toBe(true);
    expect(answer).toMatch(/^retry-after: \d+\r$/im);
    expect(answer).not.toContain("HTTP/1.1 100");
  });

  it("answers a path no channel serves 404 without asking for the body", async () => {
    const port = await start();
    const answer = await refusedWithoutBody(port, {}, "/nowhere");
    expect(answer.startsWith("HTTP/1.1 404 ")).toBe(true);
    expect(answer).not.toContain("HTTP/1.1 100");
  });
});
