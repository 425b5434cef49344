/**
 * docs/telemetry.md: "delivery never waits for the collector, and a stop waits for it at most the
 * export's timeout". A collector that takes the connection and never answers (held by a TCP
 * gate) must not make a stop wait longer than one OTEL_EXPORTER_OTLP_TIMEOUT, with or without
 * `delivery_thread` (whose thread exports its own spans).
 */
import { afterEach, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type OtlpReceiver, startOtlpReceiver } from "../../support/otlp-receiver.js";
import { startTcpGate, type TcpGate } from "../../support/tcp-gate.js";
import { startTracedService, type TracedService } from "../../support/traced-service.js";
import { waitFor } from "../../support/wait-for.js";

const EXPORT_TIMEOUT_MS = 3_000;
/** What a stop may take beyond the export's timeout: the drain, the thread's close, the exit. */
const STOP_SLACK_MS = 1_500;

let otlp: OtlpReceiver | undefined;
let receiver: Receiver | undefined;
let gate: TcpGate | undefined;
let service: TracedService | undefined;

afterEach(async () => {
  service?.spawned.child.kill("SIGKILL");
  gate?.release();
  await Promise.all([otlp?.close(), receiver?.close(), gate?.close()]);
  service = otlp = receiver = gate = undefined;
});

describe("a stop while the collector hangs", () => {
  it.each([false, true])(
    "waits for it at most the export's timeout (delivery_thread: %s)",
    async (deliveryThread) => {
      otlp = await startOtlpReceiver();
      gate = await startTcpGate("127.0.0.1", Number(new URL(otlp.endpoint).port));
      gate.hold();
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
          delivery_thread: deliveryThread,
        },
        `http://127.0.0.1:${gate.port}`,
        // The default schedule (5 s): every span of the message is still buffered at the stop.
        { OTEL_EXPORTER_OTLP_TIMEOUT: String(EXPORT_TIMEOUT_MS) },
      );
      expect((await service.post()).status).toBe(200);
      await waitFor(() => replies[0], 10_000, "the reply");

      const stoppedAt = Date.now();
      await service.stop();
      expect(Date.now() - stoppedAt).toBeLessThan(EXPORT_TIMEOUT_MS + STOP_SLACK_MS);
    },
    30_000,
  );
});
