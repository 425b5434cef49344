import type { TraceContext } from "../../core/http/trace-context.js";

/**
 * What a span records, named for this service; the OpenTelemetry side maps each to its
 * attribute (docs/telemetry.md lists them). Never a secret, never message or reply text: only
 * ids, names, numbers and error codes.
 */
export interface SpanFields {
  readonly channel?: string | undefined;
  readonly messageId?: string | undefined;
  readonly conversationId?: string | undefined;
  /** The brain asked (for a chain's calls, the brain of the chain that was asked). */
  readonly brain?: string | undefined;
  readonly replyId?: string | undefined;
  readonly replySequence?: number | undefined;
  /** 1 for the first try of a step, 2 for its first retry, and so on. */
  readonly attempt?: number | undefined;
  /** How many replies a brain call gave. */
  readonly replies?: number | undefined;
  /** The stable `ChannelError` code of a failure. */
  readonly errorCode?: string | undefined;
  readonly httpMethod?: string | undefined;
  readonly httpRoute?: string | undefined;
  readonly httpStatus?: number | undefined;
  /** A URL already redacted (`redactUrl`): no credentials, no query. */
  readonly url?: string | undefined;
}

/** The role of a span, as OpenTelemetry's span kinds name it. */
export type SpanKind = "server" | "client" | "internal";

/** One span being recorded. */
export interface TelemetrySpan {
  /**
   * The span as a W3C trace context whose `parentId` is this span's own id: the parent a child
   * span or an outgoing `traceparent` names. It keeps the parent's `tracestate`.
   */
  readonly context: TraceContext;
  /** Adds attributes; a field already set is replaced. */
  set(fields: SpanFields): void;
  /** Ends the span, as failed when `failed` (OpenTelemetry status ERROR); `endTime` in epoch ms, default now. */
  end(failed?: boolean, endTime?: number): void;
}

/**
 * Where the Node runtime's spans go. Only built when export is on (see `startTelemetry`):
 * with it off, nothing is wrapped and no span is ever made.
 */
export interface Telemetry {
  /**
   * Starts a span, child of `parent` (a remote span: the client's, or a stored message's),
   * or the root of a new trace when there is none. `startTime` in epoch ms, default now.
   */
  start(
    name: string,
    kind: SpanKind,
    parent: TraceContext | undefined,
    fields: SpanFields,
    startTime?: number,
  ): TelemetrySpan;
  /**
   * Exports the spans buffered now and goes on; never rejects (a failed export is logged as
   * every other), and is bounded by the export's timeout.
   */
  flush(): Promise<void>;
  /** Exports the spans still buffered and stops; later spans are dropped. */
  shutdown(): Promise<void>;
}

/** The `traceparent` header naming `context`'s span as the parent. */
export function traceparentOf(context: TraceContext): string {
  return `00-${context.traceId}-${context.parentId}-${context.flags}`;
}
