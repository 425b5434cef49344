/**
 * Longest piece of a letter in one SQLite value, in UTF-16 code units: a Durable Object refuses
 * strings over 2 MB, and a code unit is at most 3 bytes of UTF-8. An accepted message is at most
 * 1 MiB, but a letter holds it and its rendered replies, so a large one is kept in pieces.
 */
const PIECE_CHARS = 500_000;

/**
 * Cuts a letter's JSON into values a Durable Object stores, never between the two halves of a
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
