/**
 * The SDK's own diagnostics (`OTEL_LOG_LEVEL`) as log text: the component loggers name
 * themselves first, so what happened is in the arguments; the exporter's headers and the
 * endpoint's credentials never reach the line.
 */
import { describe, expect, it } from "vitest";
import { diagText, telemetrySecrets } from "../../../src/node/telemetry/diag-text.js";

describe("diagnostics of the OpenTelemetry SDK as log text", () => {
  it("keeps what a component logger says after its name", () => {
    expect(
      diagText(
        "OTLPExportDelegate",
        [
          "Export succeeded but could not deserialize response - is the response specification compliant?",
          new Error("Unexpected end of JSON input"),
        ],
        [],
      ),
    ).toBe(
      "OTLPExportDelegate Export succeeded but could not deserialize response - is the response specification compliant? Unexpected end of JSON input",
    );
    expect(diagText("items to be sent", [{ count: 3 }], [])).toBe('items to be sent {"count":3}');
  });

  it("bounds what the arguments add", () => {
    expect(diagText("big", ["x".repeat(5_000)], []).length).toBeLessThan(1_100);
  });

  it("redacts the exporter's header values and the endpoint's password and query", () => {
    const secrets = telemetrySecrets({
      OTEL_EXPORTER_OTLP_HEADERS: "x-api-key=abc%2F123,authorization=Bearer tok",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://user:p4ss@collector.example/v1/traces?key=qs",
    });
    const text = diagText(
      "sending",
      [
        { headers: { "x-api-key": "abc/123", authorization: "Bearer tok" } },
        "https://user:p4ss@collector.example/v1/traces?key=qs",
      ],
      secrets,
    );
    for (const secret of ["abc/123", "abc%2F123", "Bearer tok", "p4ss", "key=qs"]) expect(text).not.toContain(secret);
    expect(text).toContain("[redacted]");
  });

  it("redacts a secret that the bound would cut in two", () => {
    const secret = "sk-live-0123456789abcdef";
    const text = diagText("sending", [`${"x".repeat(990)}${secret}`], [secret]);
    expect(text).not.toContain("sk-live");
    expect(text).toContain("[redacted]");
  });

  it("takes nothing from variables that are unset, empty or not URLs", () => {
    expect(telemetrySecrets({ OTEL_EXPORTER_OTLP_ENDPOINT: "not a url", OTEL_EXPORTER_OTLP_HEADERS: "" })).toEqual([]);
  });
});
