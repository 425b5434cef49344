import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { freePort } from "../../support/free-port.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../support/otlp-receiver.js";
import { startTracedService, type TracedService, traceOf } from "../../support/traced-service.js";
import { waitFor } from "../../support/wait-for.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";

let otlp: OtlpReceiver | undefined;
let receiver: Receiver | undefined;
let service: TracedService | undefined;

afterEach(async () => {
  service?.spawned.child.kill("SIGKILL");
  await Promise.all([otlp?.close(), receiver?.close()]);
  service = otlp = receiver = undefined;
});

describe("OpenTelemetry export on Node, switched off", () => {
  it.each([
    ["OTEL_SDK_DISABLED is true", { OTEL_SDK_DISABLED: "true" }, false],
    ["OTEL_TRACES_EXPORTER is none", { OTEL_TRACES_EXPORTER: "none" }, false],
    ["the protocol is grpc", { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, true],
  ])("exports nothing when %s, though an endpoint is set", async (_name, extra: Record<string, string>, warns) => {
    otlp = await startOtlpReceiver();
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    service = await startTracedService(
      {
        channels: [
          {
            type: "webhook",
            token_env: "WEBHOOK_SECRET",
            webhook: { bind: "127.0.0.1:0", outbound_url: receiver.url },
          },
        ],
        routes: [{ channel: "webhook", brain: "echo" }],
      },
      otlp.endpoint,
      extra,
    );
    expect((await service.post({ traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` })).status).toBe(200);
    await waitFor(() => replies[0], 10_000, "the reply");
    await service.stop();
    expect(otlp.requests).toHaveLength(0);
    const lines = service.spawned.lines.filter((line) => line.includes("telemetry"));
    expect(lines.map((line) => (JSON.parse(line) as { level: string }).level)).toEqual(warns ? ["warn"] : []);
    // The message's trace goes on as without export.
    expect(traceOf(replies[0]?.headers ?? {})).toMatchObject({ traceId: TRACE_ID });
  });
});

describe("OpenTelemetry export on Node, with the collector down", () => {
  it("delivers as usual, says once that it cannot export, and still stops cleanly", async () => {
    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    service = await startTracedService(
      {
        channels: [
          {
            type: "webhook",
            token_env: "WEBHOOK_SECRET",
            webhook: { bind: "127.0.0.1:0", outbound_url: receiver.url },
          },
        ],
        routes: [{ channel: "webhook", brain: "echo" }],
      },
      `http://127.0.0.1:${await freePort()}`,
      { OTEL_BSP_SCHEDULE_DELAY: "20", OTEL_EXPORTER_OTLP_TIMEOUT: "500" },
    );
    expect((await service.post()).status).toBe(200);
    await waitFor(() => replies[0], 10_000, "the reply");
    const lines = service.spawned.lines;
    const warned = await waitFor(
      () => lines.find((line) => line.includes("telemetry: cannot export spans")),
      10_000,
      "the export warning",
    );
    expect(JSON.parse(warned)).toMatchObject({ level: "warn" });
    expect((await service.post()).status).toBe(200);
    await waitFor(() => replies[1], 10_000, "the second reply");
    await service.stop();
    expect(lines.filter((line) => line.includes("telemetry: cannot export spans"))).toHaveLength(1);
  });
});
