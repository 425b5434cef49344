import { ChannelError } from "../channel-error.js";

/** The largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1_048_576;

/** The 413 of a body over `limit` bytes. */
export const tooLarge = (limit: number): ChannelError =>
  new ChannelError("payload_too_large", `The body is larger than ${limit} bytes.`, { status: 413 });

/** Check 3 before any byte is read: a declared `Content-Length` over the limit is refused at once. */
export function checkDeclaredLength(contentLength: string | null | undefined, limit: number = MAX_BODY_BYTES): void {
  if (contentLength !== null && contentLength !== undefined && Number(contentLength) > limit) throw tooLarge(limit);
}

/**
 * Check 3 on the bytes actually received (chunked bodies too): collects chunks and refuses
 * the one that takes the total over the limit, so a reader can stop reading there. Both
 * runtimes' body readers are built on it, so the rule exists once.
 */
export class BodyCollector {
  private readonly chunks: Uint8Array[] = [];
  private total = 0;

  constructor(private readonly limit: number = MAX_BODY_BYTES) {}

  /** Adds a chunk; throws the 413 when the body is now over the limit. */
  add(chunk: Uint8Array): void {
    this.total += chunk.byteLength;
    if (this.total > this.limit) throw tooLarge(this.limit);
    this.chunks.push(chunk);
  }

  /** The whole body; a body that came in one chunk is returned without a copy. */
  bytes(): Uint8Array {
    const { chunks, total } = this;
    if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
    const bytes = new Uint8Array(total);
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.byteLength;
    }
    return bytes;
  }
}

/**
 * Reads a Web `Request` body of at most `limit` bytes. A declared length is read in one go,
 * which lets `@hono/node-server` take its fast path; only a body without one (chunked) is
 * streamed, and abandoned as soon as it passes the limit.
 */
export async function readLimitedBody(request: Request, limit: number = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  checkDeclaredLength(declared, limit);
  const collector = new BodyCollector(limit);
  if (declared !== null) {
    collector.add(new Uint8Array(await request.arrayBuffer().catch(cutShort)));
    return collector.bytes();
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read().catch(cutShort);
    if (done) return collector.bytes();
    try {
      collector.add(value);
    } catch (error) {
      await reader.cancel().catch(() => undefined);
      throw error;
    }
  }
}

/**
 * The 400 of a body that stopped arriving (the client went away, or the server's time limit cut
 * it): nothing was accepted, and it is the client's doing, not an internal error.
 */
export function bodyCutShortError(): ChannelError {
  return new ChannelError("invalid_json", "The request body was cut short.", { status: 400 });
}

function cutShort(): never {
  throw bodyCutShortError();
}
