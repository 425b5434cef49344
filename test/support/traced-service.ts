import { expect } from "vitest";
import { parseTraceContext, type TraceContext } from "../../src/core/http/trace-context.js";
import type { ReceivedSpan } from "./otlp-receiver.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "./spawn-node.js";
import { waitFor } from "./wait-for.js";

/** Every kind of secret the service may hold, by variable: none may reach a span. */
export const SECRETS = {
  WEBHOOK_SECRET: "otel-inbound-secret-0123456789",
  BOT_TOKEN: "otel-bot-token-0123456789",
  RECEIVER_TOKEN: "otel-receiver-token-0123456789",
  SIGNING_SECRET: `whsec_${Buffer.from("otel-signing-secret-0123456789ab").toString("base64")}`,
};

/** The text of every message the tests send: no span may carry it either. */
export const MESSAGE_TEXT = "a message text no span may carry";

/** OTLP's SpanKind and StatusCode values the tests look for. */
export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;
export const STATUS_ERROR = 2;

/** dist/node.js, started with every secret set and its spans sent to an OTLP endpoint. */
export interface TracedService {
  readonly spawned: Spawned;
  /** The channel's URL. */
  readonly url: string;
  /** POSTs a message (with `token` as the Bearer secret). */
  post(headers?: Record<string, string>, token?: string): Promise<Response>;
  /** SIGTERM, as an operator stops it, and its exit code 0: the spans still buffered go out before it exits. */
  stop(): Promise<void>;
}

/** Starts dist/node.js on `config`, exporting to `endpoint`, with `extra` variables. */
export async function startTracedService(
  config: Record<string, unknown>,
  endpoint: string,
  extra: Record<string, string> = {},
): Promise<TracedService> {
  const file = await writeTempConfig(config);
  const spawned = spawnNode("dist/node.js", ["--config", file], {
    ...SECRETS,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    ...extra,
  });
  const url = await listeningUrl(spawned);
  return {
    spawned,
    url,
    post: (headers = {}, token = SECRETS.WEBHOOK_SECRET) =>
      fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...headers },
        body: JSON.stringify({ sender_id: "otel-user", text: MESSAGE_TEXT }),
      }),
    async stop() {
      spawned.child.kill("SIGTERM");
      expect(await spawned.exited).toBe(0);
    },
  };
}

/** The spans once `count` of them arrived. */
export function spansWhen(spans: readonly ReceivedSpan[], count: number): Promise<readonly ReceivedSpan[]> {
  return waitFor(() => (spans.length >= count ? spans : undefined), 15_000, `${count} spans`);
}

/** The trace context a request carried in its `traceparent`. */
export function traceOf(headers: Readonly<Record<string, string | string[] | undefined>>): TraceContext | undefined {
  const value = headers.traceparent;
  return parseTraceContext(typeof value === "string" ? value : null, null);
}

/** Fails when a secret, the message text or one of `extra` is in any attribute of any span or resource. */
export function expectNothingSecret(spans: readonly ReceivedSpan[], extra: readonly string[] = []): void {
  const values = spans.flatMap((span) => [...Object.values(span.attributes), ...Object.values(span.resource)]);
  const text = values.map(String).join("\n");
  for (const secret of [...Object.values(SECRETS), MESSAGE_TEXT, ...extra]) expect(text).not.toContain(secret);
}
