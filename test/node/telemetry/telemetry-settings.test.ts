import { describe, expect, it } from "vitest";
import { readTelemetrySettings } from "../../../src/node/telemetry/telemetry-settings.js";

const ENDPOINT = "http://collector:4318";

describe("readTelemetrySettings", () => {
  it("is off without an endpoint, whatever else is set", () => {
    expect(readTelemetrySettings({})).toEqual({ on: false });
    expect(readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: " ", OTEL_SERVICE_NAME: "x" })).toEqual({ on: false });
  });

  it("sends to the shared endpoint's traces path, in protobuf by default", () => {
    expect(readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT })).toEqual({
      on: true,
      protocol: "http/protobuf",
      endpoint: `${ENDPOINT}/v1/traces`,
    });
    expect(readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: `${ENDPOINT}/base/` })).toMatchObject({
      endpoint: `${ENDPOINT}/base/v1/traces`,
    });
  });

  it("takes the traces endpoint and protocol before the shared ones, and logs no credentials or query", () => {
    expect(
      readTelemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT,
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "https://user:pass@traces.example/otlp?key=secret",
        OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/json",
      }),
    ).toEqual({ on: true, protocol: "http/json", endpoint: "https://traces.example/otlp" });
  });

  it.each([
    ["OTEL_SDK_DISABLED=true", { OTEL_SDK_DISABLED: "TRUE" }],
    ["OTEL_TRACES_EXPORTER=none", { OTEL_TRACES_EXPORTER: "none" }],
  ])("is off, quietly, with %s", (_name, extra: Record<string, string>) => {
    expect(readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, ...extra })).toEqual({ on: false });
  });

  it("keeps export on with OTEL_SDK_DISABLED=false and with otlp among the exporters", () => {
    expect(
      readTelemetrySettings({
        OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT,
        OTEL_SDK_DISABLED: "false",
        OTEL_TRACES_EXPORTER: "console, otlp",
      }),
    ).toMatchObject({ on: true });
  });

  it.each([
    ["an exporter it does not have", { OTEL_TRACES_EXPORTER: "zipkin" }, "OTEL_TRACES_EXPORTER"],
    ["the grpc protocol", { OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }, "OTEL_EXPORTER_OTLP_PROTOCOL"],
    ["an endpoint that is not an http URL", { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }, "not an http"],
  ])("is off with a warning for %s", (_name, extra: Record<string, string>, said) => {
    const settings = readTelemetrySettings({ OTEL_EXPORTER_OTLP_ENDPOINT: ENDPOINT, ...extra });
    expect(settings.on).toBe(false);
    expect(settings.on ? undefined : settings.warning).toContain(said);
  });
});
