import type { Attributes } from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";
import type { TraceContext } from "../../core/http/trace-context.js";
import type { Logger } from "../../core/log/logger.js";
import { VERSION } from "../../core/version.js";
import { diagText, telemetrySecrets } from "./diag-text.js";
import { attributesOf } from "./span-attributes.js";
import type { SpanKind, Telemetry } from "./telemetry.js";
import type { OtlpProtocol } from "./telemetry-settings.js";

/** The service's name in every span's resource unless `OTEL_SERVICE_NAME` or `OTEL_RESOURCE_ATTRIBUTES` name another. */
export const DEFAULT_SERVICE_NAME = "webhook-channel";

/**
 * Starts the OpenTelemetry SDK: a tracer provider (sampler and span limits from `OTEL_*`), a
 * batch span processor (`OTEL_BSP_*`) and the OTLP/HTTP exporter of `protocol` (endpoint,
 * headers, timeout, compression and certificates from `OTEL_EXPORTER_OTLP_*`), with a resource
 * named `webhook-channel` that `OTEL_SERVICE_NAME` and `OTEL_RESOURCE_ATTRIBUTES` override.
 * The SDK's packages are imported here, at run time, so a service that exports nothing never
 * loads them. An export that fails is logged once, and once more when exports work again.
 */
export async function startOtelTelemetry(
  protocol: OtlpProtocol,
  logger: Logger,
  env: Readonly<Record<string, string | undefined>>,
): Promise<Telemetry> {
  const [api, core, sdk, resources, semconv, otlp] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/core"),
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/resources"),
    import("@opentelemetry/semantic-conventions"),
    protocol === "http/json"
      ? import("@opentelemetry/exporter-trace-otlp-http")
      : import("@opentelemetry/exporter-trace-otlp-proto"),
  ]);
  // The SDK's own diagnostics only when asked for, as the SDK's own setup does: they go to our log lines.
  const diagLevel = core.diagLogLevelFromString(env.OTEL_LOG_LEVEL);
  if (diagLevel !== undefined) {
    const secrets = telemetrySecrets(env);
    const to =
      (write: (msg: string) => void) =>
      (message: string, ...args: unknown[]) =>
        write(`opentelemetry: ${diagText(message, args, secrets)}`);
    api.diag.setLogger(
      {
        error: to((msg) => logger.error(msg)),
        warn: to((msg) => logger.warn(msg)),
        info: to((msg) => logger.info(msg)),
        debug: to((msg) => logger.debug(msg)),
        verbose: to((msg) => logger.debug(msg)),
      },
      { logLevel: diagLevel, suppressOverrideMessage: true },
    );
  }

  const exporter = new otlp.OTLPTraceExporter();
  let failing = false;
  const loggedExporter: SpanExporter = {
    export(spans, done) {
      exporter.export(spans, (result) => {
        const ok = result.code === core.ExportResultCode.SUCCESS;
        if (!ok && !failing) {
          logger.warn("telemetry: cannot export spans; they are dropped, and the next ones are tried", {
            error: result.error?.message ?? "export failed",
          });
        } else if (ok && failing) logger.info("telemetry: exporting spans again");
        failing = !ok;
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush(),
  };

  const resource = resources
    .defaultResource()
    .merge(
      resources.resourceFromAttributes({
        [semconv.ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME,
        [semconv.ATTR_SERVICE_VERSION]: VERSION,
      }),
    )
    .merge(resources.detectResources({ detectors: [resources.envDetector] }));
  const provider = new sdk.BasicTracerProvider({
    resource,
    spanProcessors: [new sdk.BatchSpanProcessor(loggedExporter)],
  });
  const tracer = provider.getTracer(DEFAULT_SERVICE_NAME, VERSION);
  const kinds: Readonly<Record<SpanKind, number>> = {
    server: api.SpanKind.SERVER,
    client: api.SpanKind.CLIENT,
    internal: api.SpanKind.INTERNAL,
  };
  const keys = {
    errorType: semconv.ATTR_ERROR_TYPE,
    httpMethod: semconv.ATTR_HTTP_REQUEST_METHOD,
    httpRoute: semconv.ATTR_HTTP_ROUTE,
    httpStatus: semconv.ATTR_HTTP_RESPONSE_STATUS_CODE,
    url: semconv.ATTR_URL_FULL,
  };
  const parentOf = (parent: TraceContext | undefined) => {
    if (parent === undefined) return api.ROOT_CONTEXT;
    return api.trace.setSpanContext(api.ROOT_CONTEXT, {
      traceId: parent.traceId,
      spanId: parent.parentId,
      traceFlags: Number.parseInt(parent.flags, 16),
      isRemote: true,
      ...(parent.state === undefined ? {} : { traceState: api.createTraceState(parent.state) }),
    });
  };

  return {
    start(name, kind, parent, fields, startTime) {
      const attributes: Attributes = attributesOf(fields, keys);
      const span = tracer.startSpan(
        name,
        { kind: kinds[kind], attributes, ...(startTime === undefined ? {} : { startTime }) },
        parentOf(parent),
      );
      const { traceId, spanId, traceFlags } = span.spanContext();
      const flags = traceFlags.toString(16).padStart(2, "0");
      const context: TraceContext =
        parent?.state === undefined
          ? { traceId, parentId: spanId, flags }
          : { traceId, parentId: spanId, flags, state: parent.state };
      return {
        context,
        set: (more) => {
          span.setAttributes(attributesOf(more, keys));
        },
        end: (failed = false, endTime) => {
          if (failed) span.setStatus({ code: api.SpanStatusCode.ERROR });
          span.end(endTime);
        },
      };
    },
    flush: () => provider.forceFlush().catch(() => undefined),
    shutdown: () => provider.shutdown(),
  };
}
