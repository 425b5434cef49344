import { isRecord } from "../is-record.js";

/**
 * A message's W3C Trace Context (https://www.w3.org/TR/trace-context/): the trace it belongs
 * to and the span that sent it. Plain JSON, so it travels in a job through every queue and store.
 */
export interface TraceContext {
  /** 32 lower-case hex digits, not all zeros. */
  readonly traceId: string;
  /** The caller's span id: 16 lower-case hex digits, not all zeros. */
  readonly parentId: string;
  /** The trace flags: 2 lower-case hex digits (`01` is sampled). */
  readonly flags: string;
  /** The `tracestate` header as received, kept only with a valid `traceparent`. */
  readonly state?: string;
}

/** The longest `traceparent` read; the spec's version 00 is 55 characters, later versions may add fields. */
const MAX_TRACEPARENT_LENGTH = 512;
/** The longest `tracestate` kept: 32 members of up to 256 characters each, per the spec, with separators. */
export const MAX_TRACESTATE_LENGTH = 8192;

const TRACE_ID = /^[0-9a-f]{32}$/;
const SPAN_ID = /^[0-9a-f]{16}$/;
const HEX2 = /^[0-9a-f]{2}$/;
const ALL_ZEROS = /^0+$/;

/**
 * Reads the `traceparent` and `tracestate` headers; undefined when `traceparent` is absent or
 * invalid, so a bad header is ignored rather than refused. Version 00 must be exactly
 * `00-<32 hex>-<16 hex>-<2 hex>`; a later version is read by its first four fields, as the
 * spec asks, and version `ff` is invalid. Upper-case hex is invalid (the spec says lower case).
 */
export function parseTraceContext(traceparent: string | null, tracestate: string | null): TraceContext | undefined {
  if (traceparent === null || traceparent.length > MAX_TRACEPARENT_LENGTH) return undefined;
  const value = traceparent.trim();
  const version = value.slice(0, 2);
  if (!HEX2.test(version) || version === "ff") return undefined;
  if (version === "00" && value.length !== 55) return undefined;
  // A later version may append fields after a "-"; only the first four are read.
  if (version !== "00" && value.length > 55 && value[55] !== "-") return undefined;
  const [, traceId = "", parentId = "", flags = ""] = value.slice(0, 55).split("-");
  if (value[2] !== "-" || value[35] !== "-" || value[52] !== "-") return undefined;
  if (!TRACE_ID.test(traceId) || ALL_ZEROS.test(traceId)) return undefined;
  if (!SPAN_ID.test(parentId) || ALL_ZEROS.test(parentId)) return undefined;
  if (!HEX2.test(flags)) return undefined;
  const state = readTracestate(tracestate);
  return state === undefined ? { traceId, parentId, flags } : { traceId, parentId, flags, state };
}

/** A new trace for a message that came without one: random ids, not sampled. */
export function newTraceContext(): TraceContext {
  return { traceId: randomHex(16), parentId: randomHex(8), flags: "00" };
}

/**
 * The `traceparent` of a request the service makes for a message (to the brain, or a reply
 * POST): the message's trace id and flags, with a new span id of 8 random bytes.
 */
export function childTraceparent(trace: TraceContext): string {
  return `00-${trace.traceId}-${randomHex(8)}-${trace.flags}`;
}

/** The headers a request made for a message carries: `traceparent`, and `tracestate` when one came in. */
export function traceHeaders(trace: TraceContext | undefined): Record<string, string> {
  if (trace === undefined) return {};
  const headers: Record<string, string> = { traceparent: childTraceparent(trace) };
  if (trace.state !== undefined) headers.tracestate = trace.state;
  return headers;
}

/** Checks a stored {@link TraceContext} (from a job's JSON); undefined when it is not a valid one. */
export function readTraceContext(value: unknown): TraceContext | undefined {
  if (!isRecord(value)) return undefined;
  const { traceId, parentId, flags, state } = value;
  if (typeof traceId !== "string" || typeof parentId !== "string" || typeof flags !== "string") return undefined;
  return parseTraceContext(`00-${traceId}-${parentId}-${flags}`, typeof state === "string" ? state : null);
}

function readTracestate(value: string | null): string | undefined {
  if (value === null) return undefined;
  const trimmed = value.trim();
  if (trimmed.length === 0 || trimmed.length > MAX_TRACESTATE_LENGTH) return undefined;
  return trimmed;
}

/**
 * The character codes of the two hex digits of every byte value. An id is made as one flat
 * string from its codes: appended digit by digit it would be a chain of joined strings, which
 * costs a message that waits in the buffer several objects where one does.
 */
const HEX_CODES: readonly number[] = Array.from({ length: 256 }, (_, byte) => {
  const digits = byte.toString(16).padStart(2, "0");
  return [digits.charCodeAt(0), digits.charCodeAt(1)];
}).flat();
/**
 * Random bytes drawn from the CSPRNG in blocks: every accepted message without a trace takes
 * 24 of them, and one `getRandomValues` per block costs far less than one per id.
 */
const pool = new Uint8Array(4096);
let poolOffset = pool.length;
/** The codes of one id, reused per length (a trace id, a span id) so that an id allocates only its string. */
const codesOfLength = new Map<number, number[]>();

/** `bytes` random bytes as lower-case hex, never all zeros (an all-zero id is invalid). */
function randomHex(bytes: number): string {
  let codes = codesOfLength.get(bytes);
  if (codes === undefined) {
    codes = new Array<number>(bytes * 2).fill(0);
    codesOfLength.set(bytes, codes);
  }
  for (;;) {
    if (poolOffset + bytes > pool.length) {
      crypto.getRandomValues(pool);
      poolOffset = 0;
    }
    let zeros = true;
    for (let index = 0; index < bytes; index += 1) {
      const byte = pool[poolOffset + index] ?? 0;
      if (byte !== 0) zeros = false;
      codes[2 * index] = HEX_CODES[2 * byte] ?? 0;
      codes[2 * index + 1] = HEX_CODES[2 * byte + 1] ?? 0;
    }
    poolOffset += bytes;
    if (!zeros) return String.fromCharCode(...codes);
  }
}
