/**
 * The server span of a POST to a channel's path that the listener refuses before the accept
 * flow reads it (a transfer coding it cannot read, no Host, an `Expect` it does not meet):
 * docs/telemetry.md says every such POST has a span, and a refused one names the problem code
 * in `webhook_channel.error_code` and `error.type`. Recorded by a Telemetry of the test's own,
 * as in inbound-span-endings.test.ts.
 */
import { afterEach, describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import type { SpanFields, Telemetry } from "../../../src/node/telemetry/telemetry.js";
import { configDocument } from "../../support/configs.js";
import { SECRET } from "../../support/node-service.js";
import { openRawClient, type RawClient } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";

interface EndedSpan {
  readonly name: string;
  readonly fields: SpanFields;
  readonly failed: boolean;
}

/** A Telemetry that keeps each span's fields, merged, and how it ended. */
function recordingTelemetry(ended: EndedSpan[]): Telemetry {
  let next = 0;
  return {
    start(name, _kind, parent, fields) {
      let merged: SpanFields = { ...fields };
      next += 1;
      const parentId = next.toString(16).padStart(16, "0");
      return {
        context: { traceId: parent?.traceId ?? "1".repeat(32), parentId, flags: "01" },
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

async function start(ended: EndedSpan[]): Promise<number> {
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/replies" }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  service = await startService({
    config: result.config,
    secrets: new Map([["webhook", SECRET]]),
    logger: silentLogger,
    telemetry: recordingTelemetry(ended),
  });
  const port = service.listeners[0]?.port;
  if (port === undefined) throw new Error("no listener");
  return port;
}

const AUTH = `Authorization: Bearer ${SECRET}\r\nContent-Type: application/json`;

describe("the inbound server span of a POST the listener refuses itself", () => {
  it.each([
    {
      refusal: "a transfer coding other than chunked",
      wire: `POST /webhook HTTP/1.1\r\nHost: localhost\r\n${AUTH}\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n`,
      status: 501,
      code: "not_implemented",
      failed: true,
    },
    {
      refusal: "an HTTP/1.1 request without Host",
      wire: `POST /webhook HTTP/1.1\r\n${AUTH}\r\nContent-Length: 2\r\n\r\n{}`,
      status: 400,
      code: "bad_request",
      failed: false,
    },
    {
      refusal: "an Expect other than 100-continue",
      wire: `POST /webhook HTTP/1.1\r\nHost: localhost\r\nExpect: something-else\r\n${AUTH}\r\nContent-Length: 2\r\n\r\n{}`,
      status: 417,
      code: "expectation_failed",
      failed: false,
    },
  ])("names the problem code of $refusal ($status)", async ({ wire, status, code, failed }) => {
    const ended: EndedSpan[] = [];
    raw = await openRawClient(await start(ended));
    raw.socket.write(wire);
    const client = raw;
    await waitFor(() => (client.received().startsWith(`HTTP/1.1 ${status} `) ? true : undefined), 5_000, "the refusal");
    // The refusal closes the connection, and the span ends with it.
    const span = await waitFor(() => ended[0], 5_000, "the span's end");
    expect(span).toEqual({
      name: "POST /webhook",
      fields: expect.objectContaining({ httpStatus: status, errorCode: code }),
      failed,
    });
  });
});
