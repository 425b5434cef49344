import type { FuzzCase } from "./fuzz-case.js";
import { SEED } from "./fuzz-seed.js";

/** `value` as a JSON string, cut at `max` characters (with its full length) so a message stays readable. */
export function clip(value: string, max = 160): string {
  const shown = JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
  return value.length > max ? `${shown} (${value.length} chars)` : shown;
}

/** `bytes` in hex (without Buffer, so that workerd runs this too). */
function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** One case for a failure message: its seed and index (to replay it), request and world. */
export function describeCase(c: FuzzCase): string {
  const body =
    c.body === undefined
      ? "none"
      : typeof c.body === "string"
        ? clip(c.body)
        : `bytes[${c.body.length}] ${hex(c.body.slice(0, 60))}`;
  const headers = c.headers.map(([name, value]) => `${name}: ${clip(value, 80)}`).join("; ");
  return `seed ${SEED} #${c.index}: ${c.method} ${clip(c.path, 200)} [${headers}] body(${c.kind}) ${body} world ${JSON.stringify(c.world)}`;
}
