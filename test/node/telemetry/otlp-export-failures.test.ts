import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../support/otlp-receiver.js";
import {
  expectNothingSecret,
  SECRETS,
  SPAN_KIND,
  STATUS_ERROR,
  spansWhen,
  startTracedService,
  type TracedService,
  traceOf,
} from "../../support/traced-service.js";
import { waitFor } from "../../support/wait-for.js";

let otlp: OtlpReceiver | undefined;
let receiver: Receiver | undefined;
let brain: JsonTestServer | undefined;
let service: TracedService | undefined;

afterEach(async () => {
  service?.spawned.child.kill("SIGKILL");
  await Promise.all([otlp?.close(), receiver?.close(), brain?.close()]);
  service = otlp = receiver = brain = undefined;
});

/** A channel to `outboundUrl` that retries at once. */
function channelTo(outboundUrl: string) {
  return {
    type: "webhook",
    token_env: "WEBHOOK_SECRET",
    webhook: { bind: "127.0.0.1:0", outbound_url: outboundUrl, delivery: { initial_delay_ms: 20, max_delay_ms: 50 } },
  };
}

describe("OpenTelemetry export on Node, when things fail", () => {
  it("starts a trace for a message without traceparent, marks a refusal and a failed POST, over http/json", async () => {
    otlp = await startOtlpReceiver();
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({
      port: 0,
      onReply: (reply) => replies.push(reply),
      status: () => (replies.length === 1 ? 503 : 200),
    });
    service = await startTracedService(
      { channels: [channelTo(receiver.url)], routes: [{ channel: "webhook", brain: "echo" }] },
      otlp.endpoint,
      {
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_SERVICE_NAME: "otel-test",
        OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=test",
      },
    );

    const wrongToken = "not-the-secret-0123456789";
    expect((await service.post({}, wrongToken)).status).toBe(401);
    // Refused by the body's size limit, before the accept flow reads it.
    const tooLarge = await fetch(service.url, {
      method: "POST",
      headers: { authorization: `Bearer ${SECRETS.WEBHOOK_SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "otel-user", text: "x".repeat(1_100_000) }),
    });
    expect(tooLarge.status).toBe(413);
    expect((await service.post()).status).toBe(200);
    await waitFor(() => (replies.length === 2 ? true : undefined), 10_000, "the failed POST and its retry");
    await service.stop();

    const spans = await spansWhen(otlp.spans, 6);
    expect(spans).toHaveLength(6);
    expect(otlp.requests.every((request) => request.contentType.startsWith("application/json"))).toBe(true);
    for (const span of spans) {
      expect(span.resource).toMatchObject({ "service.name": "otel-test", "deployment.environment.name": "test" });
    }
    const inbound = spans.filter((span) => span.kind === SPAN_KIND.server);
    expect(inbound).toHaveLength(3);
    const refused = inbound.find((span) => span.attributes["http.response.status_code"] === 401);
    const accepted = inbound.find((span) => span.attributes["http.response.status_code"] === 200);
    // A 4xx is the client's failure: recorded, but not an error of the server span.
    expect(refused).toMatchObject({
      parentSpanId: "",
      statusCode: 0,
      attributes: { "webhook_channel.error_code": "unauthorized", "error.type": "unauthorized" },
    });
    expect(inbound.find((span) => span.attributes["http.response.status_code"] === 413)).toMatchObject({
      statusCode: 0,
      attributes: { "webhook_channel.error_code": "payload_too_large", "error.type": "payload_too_large" },
    });
    // The trace made at accept time is the inbound span's, and every later span is in it.
    expect(accepted?.parentSpanId).toBe("");
    const trace = accepted?.traceId;
    expect(spans.find((span) => span.name === "brain echo")).toMatchObject({
      traceId: trace,
      parentSpanId: accepted?.spanId,
    });
    const attempts = spans
      .filter((span) => span.name === "POST reply")
      .sort(
        (a, b) => Number(a.attributes["webhook_channel.attempt"]) - Number(b.attributes["webhook_channel.attempt"]),
      );
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({
      traceId: trace,
      parentSpanId: accepted?.spanId,
      statusCode: STATUS_ERROR,
      attributes: {
        "webhook_channel.attempt": 1,
        "http.response.status_code": 503,
        "webhook_channel.error_code": "delivery_failed",
      },
    });
    expect(attempts[1]).toMatchObject({
      traceId: trace,
      parentSpanId: accepted?.spanId,
      statusCode: 0,
      attributes: { "webhook_channel.attempt": 2, "http.response.status_code": 200 },
    });
    expect(attempts[1]?.attributes["webhook_channel.error_code"]).toBeUndefined();
    expect(replies.map((reply) => traceOf(reply.headers)?.parentId)).toEqual(attempts.map((span) => span.spanId));
    expectNothingSecret(spans, [wrongToken]);
  });

  it("draws a fallback chain as one brain span with a child per brain it asked", async () => {
    otlp = await startOtlpReceiver();
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    brain = await startJsonServer((request) =>
      request.path === "/down"
        ? { status: 500, body: { error: "down" } }
        : { status: 200, body: { replies: [{ text: "from the backup" }] } },
    );
    service = await startTracedService(
      {
        channels: [channelTo(receiver.url)],
        brains: {
          primary: { type: "http", url: `${brain.origin}/down`, token_env: "BOT_TOKEN", fallback: ["backup"] },
          backup: { type: "http", url: `${brain.origin}/up` },
        },
        routes: [{ channel: "webhook", brain: "primary" }],
      },
      otlp.endpoint,
    );
    expect((await service.post()).status).toBe(200);
    await waitFor(() => replies[0], 10_000, "the reply");
    await service.stop();

    const spans = await spansWhen(otlp.spans, 5);
    expect(spans).toHaveLength(5);
    const chain = spans.find((span) => span.name === "brain primary");
    expect(chain).toMatchObject({
      kind: SPAN_KIND.client,
      statusCode: 0,
      attributes: { "webhook_channel.replies": 1 },
    });
    const calls = spans.filter((span) => span.parentSpanId === chain?.spanId);
    expect(calls.map((span) => span.name).sort()).toEqual(["brain call backup", "brain call primary"]);
    expect(calls.find((span) => span.name === "brain call primary")).toMatchObject({
      kind: SPAN_KIND.internal,
      statusCode: STATUS_ERROR,
      attributes: {
        "webhook_channel.brain": "primary",
        "webhook_channel.error_code": "brain_failed",
        "http.response.status_code": 500,
      },
    });
    expect(calls.find((span) => span.name === "brain call backup")?.statusCode).toBe(0);
    // Both brain servers saw the chain's span as their parent.
    expect(brain.requests.map((request) => traceOf(request.headers)?.parentId)).toEqual([chain?.spanId, chain?.spanId]);
    expectNothingSecret(spans, ["from the backup"]);
  });
});
