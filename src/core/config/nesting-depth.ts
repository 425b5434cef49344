import { type ConfigProblem, formatJsonPath } from "./config-problem.js";

/**
 * The deepest nesting of arrays and objects a configuration document may have, the document
 * itself counting as one. No key of the schema lies more than a few levels down; the bound keeps
 * every later walk of the document (the search for secrets, the schema) far from the stack's end.
 */
export const MAX_CONFIG_DEPTH = 32;

/** One array or object still to look into, and how it was reached. */
interface Place {
  readonly value: object;
  readonly depth: number;
  readonly key: PropertyKey | undefined;
  readonly parent: Place | undefined;
}

/**
 * The problem of a document nested deeper than {@link MAX_CONFIG_DEPTH}, at the first array or
 * object past the bound; undefined when it is not. Walks with a list of its own rather than by
 * recursion: JSON.parse takes any depth, and a recursive walk of thousands of levels would
 * overflow the stack before it could say where.
 */
export function nestingProblem(document: unknown): ConfigProblem | undefined {
  if (!isContainer(document)) return undefined;
  const pending: Place[] = [{ value: document, depth: 1, key: undefined, parent: undefined }];
  for (let place = pending.pop(); place !== undefined; place = pending.pop()) {
    if (place.depth > MAX_CONFIG_DEPTH) {
      return {
        path: formatJsonPath(pathOf(place)),
        message: `is nested deeper than ${MAX_CONFIG_DEPTH} levels of arrays and objects, far deeper than any key of the configuration`,
        fix: "remove the nesting (config.schema.json shows where each key goes)",
      };
    }
    const entries: [PropertyKey, unknown][] = Array.isArray(place.value)
      ? place.value.map((child: unknown, index) => [index, child])
      : Object.entries(place.value);
    // Pushed last to first, so that the first deep place in reading order is the one reported.
    for (let index = entries.length - 1; index >= 0; index -= 1) {
      const [key, child] = entries[index] ?? [];
      if (key !== undefined && isContainer(child)) {
        pending.push({ value: child, depth: place.depth + 1, key, parent: place });
      }
    }
  }
  return undefined;
}

function isContainer(value: unknown): value is object {
  return value !== null && typeof value === "object";
}

/** The keys from the document down to `place`. */
function pathOf(place: Place): PropertyKey[] {
  const keys: PropertyKey[] = [];
  for (let at: Place | undefined = place; at?.key !== undefined; at = at.parent) keys.push(at.key);
  return keys.reverse();
}
