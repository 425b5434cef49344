/** Standard base64 with padding, as Standard Webhooks writes keys and signatures. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The standard base64 of `bytes`. */
export function toBase64(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/**
 * The bytes of base64 `text`, or undefined when it is not base64. Strict (the default) takes
 * standard base64 with its padding and nothing else: `atob` alone also takes whitespace and
 * missing padding, and a key pasted with a stray character must be refused at start rather
 * than sign with other bytes than the receiver expects. `strict: false` is `atob` itself, as
 * `whsec_` secrets have always been read (a stricter reading would refuse working ones).
 */
export function fromBase64(text: string, { strict = true } = {}): Uint8Array<ArrayBuffer> | undefined {
  if (strict && !BASE64.test(text)) return undefined;
  let binary: string;
  try {
    binary = atob(text);
  } catch {
    return undefined;
  }
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}
