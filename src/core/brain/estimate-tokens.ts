/**
 * Tokens counted for each message on top of its text: chat templates wrap every message in a
 * role and separators (OpenAI documents 3 to 4 per message), which a long history of short
 * turns would otherwise leave out of the estimate.
 */
export const MESSAGE_OVERHEAD_TOKENS = 4;

/** UTF-8 bytes per token assumed by the estimate. */
const BYTES_PER_TOKEN = 4;

/**
 * Estimated tokens of one message whose content is `texts` (its text, a media URL, ...):
 * their UTF-8 bytes divided by 4, rounded up, plus {@link MESSAGE_OVERHEAD_TOKENS}.
 *
 * The service knows no model's tokenizer, so this is an estimate, the same for every brain.
 * Bytes rather than characters: English runs about 4 characters (= bytes) a token, while
 * Cyrillic, Greek or CJK text takes more tokens per character and also more bytes per
 * character, so counting bytes keeps the estimate near the truth for them too, where counting
 * characters would undercount several times over.
 */
export function estimateMessageTokens(texts: readonly (string | undefined)[]): number {
  let bytes = 0;
  for (const text of texts) if (text !== undefined) bytes += utf8Length(text);
  return Math.ceil(bytes / BYTES_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS;
}

/**
 * The newest of `items` (oldest first) whose estimated tokens add up to at most `maxTokens`:
 * the oldest are dropped first, and the first item that does not fit ends the history, so it
 * never has a gap. Without a bound, every item. The caller sends the new message whatever
 * this keeps: only the history is bounded.
 */
export function newestWithinTokens<T>(
  items: readonly T[],
  maxTokens: number | undefined,
  tokensOf: (item: T) => number,
): readonly T[] {
  if (maxTokens === undefined) return items;
  let total = 0;
  let start = items.length;
  for (let index = items.length - 1; index >= 0; index -= 1) {
    const item = items[index];
    if (item === undefined) break;
    total += tokensOf(item);
    if (total > maxTokens) break;
    start = index;
  }
  return start === 0 ? items : items.slice(start);
}

/** The length of `text` in UTF-8, counted without encoding it (TextEncoder would copy it). */
function utf8Length(text: string): number {
  let bytes = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && isLowSurrogate(text.charCodeAt(index + 1))) {
      // A surrogate pair is one code point outside the BMP: 4 bytes.
      bytes += 4;
      index += 1;
    } else bytes += 3; // the rest of the BMP, and a lone surrogate (encoded as U+FFFD)
  }
  return bytes;
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
