/**
 * Ids, conversation ids, error messages and the like come from clients and servers: control
 * characters are escaped so that a crafted value cannot move the cursor or recolour the
 * operator's terminal.
 */
export function printable(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.charCodeAt(0);
    out += code < 0x20 || (code >= 0x7f && code <= 0x9f) ? `\\u${code.toString(16).padStart(4, "0")}` : char;
  }
  return out;
}

/** `text` cut to at most `max` characters, with an ellipsis when cut. */
export function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
