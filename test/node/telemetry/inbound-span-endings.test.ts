/**
 * How the server span of a request ends when no response of its own is sent: a request whose
 * body ran out of time (the 408 is written on the socket, past the response) and a client that
 * left mid-body. The spans are recorded by a Telemetry of the test's own; the export of what
 * they hold over OTLP is tested against a real receiver in otlp-export.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import type { ListenerLimits } from "../../../src/node/listener/listener-limits.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import type { SpanFields, Telemetry } from "../../../src/node/telemetry/telemetry.js";
import { configDocument } from "../../support/configs.js";
import { SECRET } from "../../support/node-service.js";
import { openRawClient, type RawClient } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";

const SHORT: ListenerLimits = {
  headersTimeoutMs: 1_000,
  requestTimeoutMs: 1_500,
  keepAliveTimeoutMs: 500,
  checkIntervalMs: 200,
  refusalWarningIntervalMs: 60_000,
};

interface EndedSpan {
  readonly name: string;
  readonly fields: SpanFields;
  readonly failed: boolean;
}

/** A Telemetry that keeps each span's fields, merged, and how it ended. */
function recordingTelemetry(ended: EndedSpan[], started: string[]): Telemetry {
  let next = 0;
  return {
    start(name, _kind, parent, fields) {
      started.push(name);
      let merged: SpanFields = { ...fields };
      next += 1;
      const parentId = next.toString(16).padStart(16, "0");
      return {
        context: { traceId: parent?.traceId ?? "1".repeat(32), parentId, flags: "01", tracestate: null },
        set(more) {
          merged = { ...merged, ...more };
        },
        end(failed = false) {
          ended.push({ name, fields: merged, failed });
        },
      };
    },
    flush: () => Promise.resolve(),
    shutdown: () => Promise.resolve(),
  };
}

let service: RunningService | undefined;
let raw: RawClient | undefined;

afterEach(async () => {
  raw?.socket.destroy();
  await service?.stop(1_000);
  service = raw = undefined;
});

async function start(ended: EndedSpan[], started: string[] = []): Promise<number> {
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  service = await startService({
    config: result.config,
    secrets: new Map([["webhook", SECRET]]),
    logger: silentLogger,
    listenerLimits: SHORT,
    telemetry: recordingTelemetry(ended, started),
  });
  const port = service.listeners[0]?.port;
  if (port === undefined) throw new Error("no listener");
  return port;
}

/** A message's head announcing a body of 100 bytes, and 10 of them. */
const HALF_SENT = `POST /webhook HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"text":"a`;

describe("the inbound server span without a response of its own", () => {
  it("ends with the 408 written on the socket, as the client's failure, when the body ran out of time", async () => {
    const ended: EndedSpan[] = [];
    raw = await openRawClient(await start(ended));
    raw.socket.write(HALF_SENT);
    const client = raw;
    await waitFor(() => (/^HTTP\/1\.1 408 /.test(client.received()) ? true : undefined), 5_000, "the 408");
    const span = await waitFor(() => ended[0], 5_000, "the span's end");
    expect(span).toEqual({
      name: "POST /webhook",
      fields: expect.objectContaining({ httpStatus: 408, errorCode: "request_timeout" }),
      failed: false,
    });
  });

  it("ends as failed with error type closed_unanswered, and no status, when the client left mid-body", async () => {
    const ended: EndedSpan[] = [];
    const started: string[] = [];
    raw = await openRawClient(await start(ended, started));
    raw.socket.write(HALF_SENT);
    await waitFor(() => (started.length === 1 ? true : undefined), 5_000, "the request's span");
    raw.socket.destroy();
    const span = await waitFor(() => ended[0], 5_000, "the span's end");
    expect(span.failed).toBe(true);
    expect(span.fields.errorCode).toBe("closed_unanswered");
    expect(span.fields.httpStatus).toBeUndefined();
  });
});
