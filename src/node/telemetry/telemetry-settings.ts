import { redactUrl } from "../../core/log/redact-url.js";

/** The OTLP encodings over HTTP that the service can export with. */
export type OtlpProtocol = "http/protobuf" | "http/json";

/**
 * Whether traces are exported, read from the standard OpenTelemetry variables: off unless an
 * OTLP endpoint is set; `warning` says why a setting that asked for export cannot have it.
 */
export type TelemetrySettings =
  | { readonly on: false; readonly warning?: string }
  | {
      readonly on: true;
      readonly protocol: OtlpProtocol;
      /** Where spans go, redacted for the log (the exporter reads the variable itself). */
      readonly endpoint: string;
    };

/**
 * Reads the variables that decide whether the SDK starts at all. Everything else (headers,
 * timeout, compression, certificates, batching, sampler, resource attributes) is read by the
 * SDK itself, from the same environment, as the OpenTelemetry specification says.
 */
export function readTelemetrySettings(env: Readonly<Record<string, string | undefined>>): TelemetrySettings {
  const value = (name: string): string | undefined => {
    const raw = env[name]?.trim();
    return raw === undefined || raw === "" ? undefined : raw;
  };
  if (value("OTEL_SDK_DISABLED")?.toLowerCase() === "true") return { on: false };
  const tracesEndpoint = value("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const endpoint = value("OTEL_EXPORTER_OTLP_ENDPOINT");
  if (tracesEndpoint === undefined && endpoint === undefined) return { on: false };
  const exporters = (value("OTEL_TRACES_EXPORTER") ?? "otlp").split(",").map((name) => name.trim().toLowerCase());
  if (exporters.includes("none")) return { on: false };
  if (!exporters.includes("otlp")) {
    return {
      on: false,
      warning: `OTEL_TRACES_EXPORTER is "${exporters.join(",")}": only "otlp" is supported, so no traces are exported`,
    };
  }
  const protocol =
    value("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") ?? value("OTEL_EXPORTER_OTLP_PROTOCOL") ?? "http/protobuf";
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    return {
      on: false,
      warning: `the OTLP protocol "${protocol}" is not supported: set OTEL_EXPORTER_OTLP_PROTOCOL to http/protobuf (the default) or http/json; no traces are exported`,
    };
  }
  // The signal's own endpoint is used as it is; the shared one gets the traces path, as the SDK does.
  const target = tracesEndpoint ?? `${endpoint}${endpoint?.endsWith("/") === true ? "" : "/"}v1/traces`;
  const variable = tracesEndpoint === undefined ? "OTEL_EXPORTER_OTLP_ENDPOINT" : "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
  if (!URL.canParse(target) || !/^https?:$/.test(new URL(target).protocol)) {
    return { on: false, warning: `${variable} is not an http:// or https:// URL; no traces are exported` };
  }
  return { on: true, protocol, endpoint: redactUrl(target) };
}
