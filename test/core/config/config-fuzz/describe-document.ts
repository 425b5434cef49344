import { SEED } from "./fuzz-seed.js";
import type { FuzzDocument } from "./generate-document.js";

/** `value` as JSON, cut at `max` characters (with its full length); a note when it cannot be written. */
export function clipJson(value: unknown, max = 600): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch (error) {
    return `(not writable as JSON: ${String(error)})`;
  }
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** One document for a failure message: its seed and index (to replay it), how it was made, and itself. */
export function describeDocument(d: FuzzDocument): string {
  return `seed ${SEED} #${d.index} [${d.steps.join("; ")}] ${clipJson(d.document)}`;
}
