import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../support/otlp-receiver.js";
import {
  expectNothingSecret,
  SPAN_KIND,
  STATUS_ERROR,
  spansWhen,
  startTracedService,
  type TracedService,
  traceOf,
} from "../../support/traced-service.js";
import { waitFor } from "../../support/wait-for.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

let otlp: OtlpReceiver | undefined;
let receiver: Receiver | undefined;
let brain: JsonTestServer | undefined;
let service: TracedService | undefined;

afterEach(async () => {
  service?.spawned.child.kill("SIGKILL");
  await Promise.all([otlp?.close(), receiver?.close(), brain?.close()]);
  service = otlp = receiver = brain = undefined;
});

describe("OpenTelemetry export on Node", () => {
  it.each([false, true])(
    "exports the inbound, brain and reply POST spans of a message in the client's trace over http/protobuf (delivery_thread: %s)",
    async (deliveryThread) => {
      otlp = await startOtlpReceiver();
      const replies: ReceivedReply[] = [];
      receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
      brain = await startJsonServer(() => ({
        status: 200,
        body: { replies: [{ text: "the first reply text" }, { text: "the second reply text" }] },
      }));
      service = await startTracedService(
        {
          channels: [
            {
              type: "webhook",
              token_env: "WEBHOOK_SECRET",
              webhook: {
                bind: "127.0.0.1:0",
                outbound_url: `${receiver.url}?token=in-the-query`,
                signing_secret_env: "SIGNING_SECRET",
                outbound_token_env: "RECEIVER_TOKEN",
              },
            },
          ],
          brains: { bot: { type: "http", url: `${brain.origin}/bot`, token_env: "BOT_TOKEN" } },
          routes: [{ channel: "webhook", brain: "bot" }],
          delivery_thread: deliveryThread,
        },
        otlp.endpoint,
      );

      const response = await service.post({
        traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01`,
        tracestate: "vendor=abc",
      });
      expect(response.status).toBe(200);
      const { message_id: messageId } = (await response.json()) as { message_id: string };
      await waitFor(() => (replies.length === 2 ? true : undefined), 10_000, "two replies");
      await service.stop();

      const spans = await spansWhen(otlp.spans, 4);
      expect(spans).toHaveLength(4);
      expect(otlp.requests.every((request) => request.path === "/v1/traces")).toBe(true);
      expect(otlp.requests.every((request) => request.contentType === "application/x-protobuf")).toBe(true);
      for (const span of spans) {
        expect(span.traceId).toBe(TRACE_ID);
        expect(span.resource["service.name"]).toBe("webhook-channel");
        expect(span.attributes["webhook_channel.channel"]).toBe("webhook");
        expect(span.attributes["webhook_channel.message_id"]).toBe(messageId);
        expect(span.attributes["webhook_channel.conversation_id"]).toBe("otel-user");
        expect(span.statusCode).not.toBe(STATUS_ERROR);
      }

      // The inbound span is the child of the client's span.
      const inbound = spans.filter((span) => span.kind === SPAN_KIND.server);
      expect(inbound).toHaveLength(1);
      expect(inbound[0]).toMatchObject({
        name: "POST /webhook",
        parentSpanId: CLIENT_SPAN,
        attributes: { "http.request.method": "POST", "http.route": "/webhook", "http.response.status_code": 200 },
      });
      const inboundId = inbound[0]?.spanId;

      const brainSpans = spans.filter((span) => span.name === "brain bot");
      expect(brainSpans).toHaveLength(1);
      expect(brainSpans[0]).toMatchObject({
        kind: SPAN_KIND.client,
        parentSpanId: inboundId,
        attributes: { "webhook_channel.brain": "bot", "webhook_channel.replies": 2, "http.response.status_code": 200 },
      });
      // The brain server's parent is the exported brain span.
      expect(traceOf(brain.requests[0]?.headers ?? {})).toMatchObject({
        traceId: TRACE_ID,
        parentId: brainSpans[0]?.spanId,
      });

      const attempts = spans.filter((span) => span.name === "POST reply");
      expect(attempts).toHaveLength(2);
      for (const reply of replies) {
        const attempt = attempts.find(
          (span) => span.attributes["webhook_channel.reply_id"] === reply.headers["webhook-id"],
        );
        expect(attempt).toMatchObject({
          kind: SPAN_KIND.client,
          parentSpanId: inboundId,
          attributes: {
            "webhook_channel.reply_sequence": (reply.body as { sequence: number }).sequence,
            "webhook_channel.attempt": 1,
            "http.request.method": "POST",
            "http.response.status_code": 200,
            "url.full": receiver.url,
          },
        });
        // The receiver's parent is the exported attempt span; the client's tracestate goes along.
        expect(traceOf(reply.headers)).toMatchObject({ traceId: TRACE_ID, parentId: attempt?.spanId, flags: "01" });
        expect(reply.headers.tracestate).toBe("vendor=abc");
      }
      const sequences = new Set(attempts.map((span) => span.attributes["webhook_channel.reply_sequence"]));
      expect(sequences).toEqual(new Set([1, 2]));
      expectNothingSecret(spans, ["in-the-query", "reply text"]);
      const announced = service.spawned.lines.find((line) => line.includes("telemetry: exporting traces over OTLP"));
      expect(JSON.parse(announced ?? "{}")).toMatchObject({
        level: "info",
        endpoint: `${otlp.endpoint}/v1/traces`,
        protocol: "http/protobuf",
      });
    },
  );
});
