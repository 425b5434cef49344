import { toBase64 } from "../outbound/base64.js";

/**
 * The fingerprint of a request kept with its `Idempotency-Key`: the SHA-256 of the body's
 * bytes, in base64. A retry sends the same bytes; a key reused for another body is told apart
 * by it and refused rather than answered with the first message, which would drop the second
 * one behind a 200. Bytes rather than the parsed message, so that what counts as the same
 * request is what the client sent, whatever the channel's mapping reads from it.
 */
export async function requestFingerprint(body: Uint8Array): Promise<string> {
  // A view of shared memory is copied: digest takes an ArrayBuffer's bytes only.
  const bytes = isOnArrayBuffer(body) ? body : new Uint8Array(body);
  return toBase64(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes)));
}

function isOnArrayBuffer(bytes: Uint8Array): bytes is Uint8Array<ArrayBuffer> {
  return bytes.buffer instanceof ArrayBuffer;
}
