import { ChannelError } from "../errors/channel-error.js";

/** The largest accepted request body: 1 MiB. */
export const MAX_BODY_BYTES = 1_048_576;

/** The 413 of a body over `limit` bytes. */
export const tooLarge = (limit: number): ChannelError =>
  new ChannelError("payload_too_large", `The body is larger than ${limit} bytes.`, { status: 413 });

/**
 * Reads a request body of at most `limit` bytes. A declared `Content-Length` over the limit
 * fails before anything is read. A declared length is read in one go, which lets
 * `@hono/node-server` take its fast path; only a body without one (chunked) is streamed and
 * counted, and abandoned as soon as it passes the limit.
 */
export async function readLimitedBody(request: Request, limit: number = MAX_BODY_BYTES): Promise<Uint8Array> {
  const declared = request.headers.get("content-length");
  if (declared !== null) {
    if (Number(declared) > limit) throw tooLarge(limit);
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (bytes.byteLength > limit) throw tooLarge(limit);
    return bytes;
  }
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  if (chunks.length === 1 && chunks[0] !== undefined) return chunks[0];
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
