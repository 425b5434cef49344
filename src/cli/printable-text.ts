/**
 * Whether a character is one a terminal acts on rather than shows: a C0 or C1 control (C1 as
 * UTF-8 is taken as CSI, OSC... by some terminals), or a bidirectional override or isolate,
 * which shows text in another order than it is.
 */
function isControl(code: number): boolean {
  return (
    code < 0x20 ||
    (code >= 0x7f && code <= 0x9f) ||
    (code >= 0x202a && code <= 0x202e) ||
    (code >= 0x2066 && code <= 0x2069)
  );
}

/**
 * Ids, conversation ids, error messages and the like come from clients and servers: control
 * characters are escaped so that a crafted value cannot move the cursor, recolour the
 * operator's terminal or reorder what it shows.
 */
export function printable(text: string): string {
  let out = "";
  for (const char of text) {
    const code = char.charCodeAt(0);
    out += isControl(code) ? `\\u${code.toString(16).padStart(4, "0")}` : char;
  }
  return out;
}

/**
 * JSON for a terminal: what `JSON.stringify` leaves as it is of the characters a terminal acts
 * on (C1 controls, bidirectional ones) escaped too, still valid JSON of the same value.
 */
export function printableJson(value: unknown, indent?: number): string {
  // C0 controls are escaped by JSON.stringify already; the line breaks left are its indentation.
  return JSON.stringify(value, null, indent).replace(
    /[\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g,
    (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/** `text` cut to at most `max` characters, with an ellipsis when cut. */
export function shorten(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
