import { SEED } from "./fuzz-seed.js";
import type { FuzzCase } from "./generate-argv.js";

/** `value` as a JSON string, cut at `max` characters (with its full length) so a message stays readable. */
export function clip(value: string, max = 160): string {
  const shown = JSON.stringify(value.length > max ? `${value.slice(0, max)}…` : value);
  return value.length > max ? `${shown} (${value.length} chars)` : shown;
}

/** One case for a failure message: its seed and index (to replay it), how it was made, its argv and env. */
export function describeCase(c: FuzzCase): string {
  const argv = c.argv.map((word) => clip(word, 120)).join(", ");
  const env = Object.entries(c.env)
    .map(([name, value]) => `${name}=${clip(value, 80)}`)
    .join(" ");
  return `seed ${SEED} #${c.index} (${c.kind}): argv [${argv}] env {${env}}`;
}

/** The first line of `text`, cut, to show what a run said. */
export function firstLine(text: string): string {
  return clip(text.split("\n")[0] ?? "", 200);
}
