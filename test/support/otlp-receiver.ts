import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { gunzipSync } from "node:zlib";
import protobuf from "protobufjs";

/** One span as an OTLP receiver decoded it; ids in lower-case hex, as in a `traceparent`. */
export interface ReceivedSpan {
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP's SpanKind: 2 server, 3 client, 1 internal. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** OTLP's StatusCode: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
  /** The attributes of the resource the span came with. */
  readonly resource: Readonly<Record<string, string | number | boolean>>;
}

/** A running OTLP/HTTP trace receiver. */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string;
  /** Every span received, in order. */
  readonly spans: ReceivedSpan[];
  /** Path and content type of every export request. */
  readonly requests: { readonly path: string; readonly contentType: string }[];
  close(): Promise<void>;
}

/** The official OTLP definitions (opentelemetry-proto v1.11.0), copied beside this file. */
const PROTO_ROOT = fileURLToPath(new URL("./otlp-proto/", import.meta.url));

let requestType: Promise<protobuf.Type> | undefined;

/** ExportTraceServiceRequest, loaded once from the .proto files. */
function exportRequestType(): Promise<protobuf.Type> {
  requestType ??= (async () => {
    const root = new protobuf.Root();
    root.resolvePath = (_origin, target) => `${PROTO_ROOT}${target}`;
    await root.load("opentelemetry/proto/collector/trace/v1/trace_service.proto");
    return root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
  })();
  return requestType;
}

/**
 * A loopback OTLP/HTTP receiver on a free port, as a collector would be: it takes
 * `POST /v1/traces` in protobuf (decoded with protobufjs and the official .proto files) or in
 * JSON (OTLP/JSON, ids in hex), gzip or not, answers 200 with an empty response, and keeps
 * every span.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const type = await exportRequestType();
  const spans: ReceivedSpan[] = [];
  const requests: { path: string; contentType: string }[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const contentType = request.headers["content-type"] ?? "";
      requests.push({ path: request.url ?? "", contentType });
      let body = Buffer.concat(chunks);
      if (request.headers["content-encoding"] === "gzip") body = gunzipSync(body);
      const json = contentType.startsWith("application/json");
      const decoded: unknown = json
        ? JSON.parse(body.toString("utf8"))
        : type.toObject(type.decode(body), { longs: String, enums: Number, bytes: String });
      spans.push(...readSpans(decoded, json));
      response.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
      response.end(json ? "{}" : "");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    spans,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Json = Record<string, unknown>;

const list = (value: unknown): Json[] => (Array.isArray(value) ? (value as Json[]) : []);

/**
 * The spans of a decoded ExportTraceServiceRequest. Protobuf bytes come as base64 here (the
 * decoder's `bytes: String`), OTLP/JSON ids as hex already.
 */
function readSpans(request: unknown, json: boolean): ReceivedSpan[] {
  const id = (value: unknown): string =>
    typeof value !== "string" ? "" : json ? value.toLowerCase() : Buffer.from(value, "base64").toString("hex");
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of list((request as Json).resourceSpans)) {
    const resource = attributesOf((resourceSpans.resource as Json | undefined)?.attributes);
    for (const scopeSpans of list(resourceSpans.scopeSpans)) {
      for (const span of list(scopeSpans.spans)) {
        spans.push({
          traceId: id(span.traceId),
          spanId: id(span.spanId),
          parentSpanId: id(span.parentSpanId),
          name: String(span.name),
          kind: Number(span.kind ?? 0),
          attributes: attributesOf(span.attributes),
          statusCode: Number((span.status as Json | undefined)?.code ?? 0),
          resource,
        });
      }
    }
  }
  return spans;
}

/** OTLP KeyValues as a record; an int64 (a string from either decoder) as a number. */
function attributesOf(value: unknown): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value: any } of list(value)) {
    const field = (any ?? {}) as Json;
    if (typeof field.stringValue === "string") attributes[String(key)] = field.stringValue;
    else if (field.intValue !== undefined) attributes[String(key)] = Number(field.intValue);
    else if (typeof field.boolValue === "boolean") attributes[String(key)] = field.boolValue;
    else if (typeof field.doubleValue === "number") attributes[String(key)] = field.doubleValue;
  }
  return attributes;
}
