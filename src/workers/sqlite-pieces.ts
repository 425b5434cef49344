/**
 * Longest piece of a long text in one SQLite value, in UTF-16 code units: a Durable Object refuses
 * a string (indeed a row) over 2 MB, and a code unit is at most 3 bytes of UTF-8. An accepted
 * message is at most 1 MiB, but a job or a letter holds it and its rendered replies (a brain's
 * answer may be larger still), so a long one is kept in pieces.
 */
const PIECE_CHARS = 500_000;

/** The most UTF-8 bytes of text kept in one value: a row's other columns and its key fit beside it. */
const WHOLE_BYTES = 1_900_000;

/**
 * Cuts a text into values a Durable Object stores, never between the two halves of a
 * surrogate pair (each half alone would be stored as U+FFFD).
 */
export function piecesOf(json: string): string[] {
  const pieces: string[] = [];
  let start = 0;
  while (start < json.length || pieces.length === 0) {
    let end = Math.min(start + PIECE_CHARS, json.length);
    const last = json.charCodeAt(end - 1);
    if (end < json.length && last >= 0xd800 && last <= 0xdbff) end -= 1;
    pieces.push(json.slice(start, end));
    start = end;
  }
  return pieces;
}

/** Whether a text fits one value whole; only a text long enough to be in doubt is encoded to tell. */
export function fitsOneValue(text: string): boolean {
  if (text.length * 3 <= WHOLE_BYTES) return true;
  return text.length <= WHOLE_BYTES && new TextEncoder().encode(text).byteLength <= WHOLE_BYTES;
}
