/**
 * The operator events' sender against a real operator endpoint on port 0, through the Poster
 * the Workers use (`fetch`): what arrives is verified with the sample receiver's own signature
 * check, as a team's endpoint would verify it.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { noopMetrics } from "../../../src/core/metrics/noop-metrics.js";
import type { OperatorEventInput } from "../../../src/core/operator-events/operator-event.js";
import { createOperatorEventRoutes } from "../../../src/core/operator-events/operator-event-routes.js";
import {
  createOperatorEventSender,
  type OperatorEventSender,
  type OperatorEventSenderOptions,
} from "../../../src/core/operator-events/operator-event-sender.js";
import { createFetchPoster } from "../../../src/core/outbound/fetch-poster.js";
import { createSignatureCheck } from "../../../src/node/receiver/signature-check.js";
import { nodeKeyPair } from "../../support/ed25519-pair.js";
import {
  type JsonTestServer,
  type RecordedRequest,
  startJsonServer,
  type TestResponse,
} from "../../support/json-test-server.js";
import { createLogSink } from "../../support/log-sink.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const PAIR = nodeKeyPair();
const ENV: Record<string, string> = { OPS_SECRET: SECRET, OPS_KEY: PAIR.secretKey };

let server: JsonTestServer | undefined;
let sender: OperatorEventSender | undefined;

afterEach(async () => {
  await sender?.close(0);
  await server?.close();
  sender = undefined;
  server = undefined;
});

/** A configuration of one channel whose operator events go to `operatorEvents`. */
function configWith(operatorEvents: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const result = validateConfig({
    channels: [
      { type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/replies" } },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    operator_events: operatorEvents,
    ...extra,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

/** The dead letter event a test raises; the fields are what the lane runner puts in. */
function deadLetter(messageId: string): OperatorEventInput {
  return {
    type: "message.dead_lettered",
    channel: "webhook",
    data: {
      message_id: messageId,
      conversation_id: "carol",
      step: "delivery",
      error_code: "delivery_failed",
      error: "outbound_url answered 500",
      status: 500,
      attempts: 12,
      received_at: new Date(0).toISOString(),
      died_at: new Date(1).toISOString(),
      replay: `npx webhook-channel dead-letters replay --id ${messageId}`,
    },
  };
}

/** Starts an operator endpoint answering `answer`, and a sender posting to it. */
async function start(
  answer: (request: RecordedRequest) => TestResponse,
  settings: Record<string, unknown> = { signing_secret_env: "OPS_SECRET" },
  options: Partial<OperatorEventSenderOptions> = {},
) {
  server = await startJsonServer(answer);
  const { logger, lines } = createLogSink();
  const counted: string[] = [];
  sender = createOperatorEventSender({
    routes: await createOperatorEventRoutes(
      configWith({ url: `${server.origin}/ops`, ...settings }),
      (name) => ENV[name],
    ),
    poster: createFetchPoster(fetch),
    logger,
    metrics: { ...noopMetrics, operatorEvent: (type, outcome) => counted.push(`${type} ${outcome}`) },
    initialDelayMs: 20,
    maxDelayMs: 50,
    ...options,
  });
  return { server, sender, lines, counted };
}

function headersOf(request: RecordedRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, String(value)]));
}

describe("the operator event sender", () => {
  it("signs each event as replies are signed, so the receiver's own check verifies v1 and v1a alike", async () => {
    const { server, sender } = await start(() => ({ status: 204 }), {
      signing_secret_env: "OPS_SECRET",
      signing_key_env: "OPS_KEY",
    });
    sender.emit(deadLetter("m1"));
    const [request] = await waitFor(() => (server.requests.length === 1 ? server.requests : undefined));
    if (request === undefined) throw new Error("no request");
    const headers = headersOf(request);
    const byHmac = await createSignatureCheck(SECRET, undefined);
    const byKey = await createSignatureCheck(undefined, PAIR.publicKey);
    expect(byHmac?.(request.raw, headers)).toEqual({ ok: true, scheme: "v1" });
    expect(byKey?.(request.raw, headers)).toEqual({ ok: true, scheme: "v1a" });
    expect(byHmac?.(request.raw.replace("m1", "m2"), headers)).toEqual({ ok: false });
    const body = request.body as Record<string, unknown>;
    expect(body).toMatchObject({
      type: "message.dead_lettered",
      id: headers["webhook-id"],
      channel: "webhook",
      data: { message_id: "m1", conversation_id: "carol", error_code: "delivery_failed", attempts: 12 },
    });
    expect(String(body.id)).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(Date.parse(String(body.created_at))).not.toBeNaN();
    expect(headers["content-type"]).toBe("application/json");
    expect(headers["user-agent"]).toMatch(/^webhook-channel\//);
  });

  it("gives every event its own webhook-id, and a retried event the same id and bytes, signed afresh", async () => {
    let calls = 0;
    const { server, sender, counted } = await start(() => ({ status: calls++ === 0 ? 503 : 200 }));
    sender.emit(deadLetter("m1"));
    sender.emit(deadLetter("m2"));
    await waitFor(() => (server.requests.length === 3 ? true : undefined), 5_000, "three POSTs");
    await sender.settled();
    const ids = server.requests.map((request) => headersOf(request)["webhook-id"]);
    expect(new Set(ids).size).toBe(2);
    const check = await createSignatureCheck(SECRET, undefined);
    for (const request of server.requests) expect(check?.(request.raw, headersOf(request)).ok).toBe(true);
    const [first, ...rest] = server.requests;
    const retried = rest.find(
      (request) => headersOf(request)["webhook-id"] === headersOf(first as RecordedRequest)["webhook-id"],
    );
    expect(retried?.raw).toBe(first?.raw);
    expect(counted.sort()).toEqual(["message.dead_lettered sent", "message.dead_lettered sent"]);
  });

  it("tries a failure that may pass again with a backoff, at most maxAttempts times, then warns", async () => {
    const { server, sender, lines, counted } = await start(() => ({ status: 500 }), undefined, { maxAttempts: 3 });
    sender.emit(deadLetter("m1"));
    await waitFor(() => (counted.length === 1 ? true : undefined), 5_000, "the give-up");
    expect(server.requests).toHaveLength(3);
    expect(counted).toEqual(["message.dead_lettered failed"]);
    expect(lines.find((line) => line.msg === "operator event not delivered: its URL did not take it")).toMatchObject({
      level: "warn",
      type: "message.dead_lettered",
      attempts: 3,
      status: 500,
      url: `${server.origin}/ops`,
    });
    expect(sender.pending).toBe(0);
  });

  it("gives up at once on an answer that will not change (400)", async () => {
    const { server, sender, counted } = await start(() => ({ status: 400 }));
    sender.emit(deadLetter("m1"));
    await waitFor(() => (counted.length === 1 ? true : undefined), 5_000, "the give-up");
    expect(server.requests).toHaveLength(1);
    expect(counted).toEqual(["message.dead_lettered failed"]);
  });

  it("tries an operator URL that does not answer again, within timeout_ms each time", async () => {
    // An answer after 10 s: two attempts of 100 ms each give up within some 200 ms, 3 s on a
    // loaded machine; without the time limit the give-up would wait for the answers (20 s).
    const { server, sender, counted } = await start(
      () => ({ status: 200, delayMs: 10_000 }),
      {
        signing_secret_env: "OPS_SECRET",
        timeout_ms: 100,
      },
      { maxAttempts: 2 },
    );
    const began = performance.now();
    sender.emit(deadLetter("m1"));
    await waitFor(() => (counted.length === 1 ? true : undefined), 5_000, "the give-up");
    expect(performance.now() - began).toBeLessThan(3_000);
    expect(counted).toEqual(["message.dead_lettered failed"]);
    // The server records a request once it has read it, which a loaded machine may do after the
    // sender gave up on it.
    await waitFor(() => (server.requests.length >= 2 ? true : undefined), 5_000, "both attempts at the server");
    expect(server.requests).toHaveLength(2);
  });

  it("returns from emit at once, whatever the operator URL takes to answer", async () => {
    // An answer after 2 s: an emit that waited for it would take that long, one that returns at
    // once takes a few ms, so 1 s leaves a loaded machine room. Still pending when emit returns.
    const { sender } = await start(() => ({ status: 200, delayMs: 2_000 }));
    const began = performance.now();
    sender.emit(deadLetter("m1"));
    expect(performance.now() - began).toBeLessThan(1_000);
    expect(sender.pending).toBe(1);
    await sender.settled();
    expect(sender.pending).toBe(0);
  });

  it("keeps at most `capacity` events, dropping the oldest waiting one with a warning and the metric", async () => {
    const { server, sender, lines, counted } = await start(() => ({ status: 200, delayMs: 200 }), undefined, {
      capacity: 2,
      concurrency: 1,
    });
    for (const id of ["m1", "m2", "m3", "m4"]) sender.emit(deadLetter(id));
    await sender.settled();
    const sent = server.requests.map((request) => (request.body as { data: { message_id: string } }).data.message_id);
    // m1 was in flight, and counts: m2, then m3, were the oldest waiting when the next came.
    expect(sent).toEqual(["m1", "m4"]);
    expect(counted.filter((entry) => entry.endsWith("dropped"))).toEqual([
      "message.dead_lettered dropped",
      "message.dead_lettered dropped",
    ]);
    expect(lines.find((line) => String(line.msg).startsWith("operator event dropped"))).toMatchObject({
      level: "warn",
      type: "message.dead_lettered",
    });
  });

  it("at a stop, tries what waits for a retry once more at once, then drops what is left with a warning", async () => {
    let calls = 0;
    const { server, sender, counted, lines } = await start(() => ({ status: calls++ === 0 ? 503 : 200 }), undefined, {
      initialDelayMs: 60_000,
      maxDelayMs: 60_000,
      random: () => 0.99,
    });
    sender.emit(deadLetter("m1"));
    await waitFor(() => (server.requests.length === 1 ? true : undefined), 5_000, "the first POST");
    // Waiting for its retry: the 503 reached the server before the sender read it, and an attempt
    // still under way when the stop begins is not one that waits.
    await waitFor(
      () => (lines.some((line) => line.msg === "operator event attempt failed; tried again later") ? true : undefined),
      5_000,
      "the first attempt's failure",
    );
    expect(sender.pending).toBe(1);
    await sender.close(2_000);
    expect(server.requests).toHaveLength(2);
    expect(counted).toEqual(["message.dead_lettered sent"]);
    sender.emit(deadLetter("m2"));
    expect(counted).toEqual(["message.dead_lettered sent", "message.dead_lettered dropped"]);
  });

  it("keeps at most `capacity` events with the URL down, retries and events in flight included", async () => {
    const { server, sender, lines } = await start(() => ({ status: 503 }), undefined, {
      capacity: 2,
      concurrency: 4,
      initialDelayMs: 60_000,
      maxDelayMs: 60_000,
      random: () => 0.99,
    });
    for (const id of ["m1", "m2", "m3", "m4"]) sender.emit(deadLetter(id));
    expect(sender.pending).toBeLessThanOrEqual(2);
    const retrying = () => lines.filter((line) => line.msg === "operator event attempt failed; tried again later");
    await waitFor(() => (retrying().length === 2 ? true : undefined), 5_000, "two retries waiting");
    for (const id of ["m5", "m6", "m7", "m8"]) sender.emit(deadLetter(id));
    expect(sender.pending).toBe(2);
    expect(server.requests).toHaveLength(2);
  });

  it("at a stop whose time runs out, tells an attempt still under way as dropped, and nothing after", async () => {
    const real = createFetchPoster(fetch);
    let answered = 0;
    const poster = { post: (...args: Parameters<typeof real.post>) => real.post(...args).finally(() => answered++) };
    const { server, sender, lines, counted } = await start(
      () => ({ status: 200, delayMs: 1_000 }),
      { signing_secret_env: "OPS_SECRET", timeout_ms: 5_000 },
      { poster },
    );
    sender.emit(deadLetter("m1"));
    await waitFor(() => (server.requests.length === 1 ? true : undefined), 5_000, "the POST");
    await sender.close(100);
    expect(counted).toEqual(["message.dead_lettered dropped"]);
    expect(lines.filter((line) => String(line.msg).startsWith("operator event dropped"))).toHaveLength(1);
    // Its answer, when it comes, is not counted again.
    await waitFor(() => (answered === 1 ? true : undefined), 5_000, "the late answer");
    expect(counted).toEqual(["message.dead_lettered dropped"]);
  });
});
