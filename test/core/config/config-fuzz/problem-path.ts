import { configJsonSchema } from "../../../../src/core/config/config-json-schema.js";
import { isRecord } from "../../../../src/core/is-record.js";

/** One step of a problem's path: a key (bare ones may be part of a dotted key) or an index. */
type Segment =
  | { readonly kind: "key"; readonly key: string; readonly bare: boolean }
  | { readonly kind: "index"; readonly index: number };

/** Every key the configuration's JSON Schema names, at any depth: the keys a path may intend. */
export const SCHEMA_KEYS: ReadonlySet<string> = (() => {
  const keys = new Set<string>();
  const pending: unknown[] = [configJsonSchema()];
  for (let value = pending.pop(); value !== undefined; value = pending.pop()) {
    if (Array.isArray(value)) pending.push(...value);
    else if (isRecord(value)) {
      if (isRecord(value.properties)) for (const key of Object.keys(value.properties)) keys.add(key);
      pending.push(...Object.values(value));
    }
  }
  return keys;
})();

/**
 * Reads a path as `formatJsonPath` writes it (`channels[0].webhook["a b"]`); undefined when it
 * is not one. A bare key runs to the next `.` or `[`, so a key with a dot in it reads as several.
 */
export function parsePath(path: string): Segment[] | undefined {
  const segments: Segment[] = [];
  let at = 0;
  const bare = (): void => {
    let end = at;
    while (end < path.length && path[end] !== "." && path[end] !== "[") end += 1;
    segments.push({ kind: "key", key: path.slice(at, end), bare: true });
    at = end;
  };
  if (path !== "" && path[0] !== "[") bare();
  while (at < path.length) {
    if (path[at] === ".") {
      at += 1;
      bare();
    } else if (path.startsWith('["', at)) {
      let end = at + 2;
      while (end < path.length && path[end] !== '"') end += path[end] === "\\" ? 2 : 1;
      if (path[end + 1] !== "]") return undefined;
      segments.push({ kind: "key", key: JSON.parse(path.slice(at + 1, end + 1)) as string, bare: false });
      at = end + 2;
    } else {
      const match = /^\[(\d+)\]/.exec(path.slice(at));
      if (match === null) return undefined;
      segments.push({ kind: "index", index: Number(match[1]) });
      at += match[0].length;
    }
  }
  return segments;
}

/**
 * True when `segments` lead through `value`: each key or index is there, or, once one is not
 * (a required key left out, a default's key), every step left is a key the schema has.
 */
function leads(value: unknown, segments: readonly Segment[], from: number): boolean {
  if (from === segments.length) return true;
  const segment = segments[from] as Segment;
  if (segment.kind === "index") {
    return Array.isArray(value) && segment.index < value.length && leads(value[segment.index], segments, from + 1);
  }
  if (isRecord(value)) {
    // A bare key may be the first part of a dotted one: "a.b" is written bare.
    let key = segment.key;
    for (let to = from; to < segments.length; to += 1) {
      if (Object.hasOwn(value, key) && leads(value[key], segments, to + 1)) return true;
      const next = segments[to + 1];
      if (next?.kind !== "key" || !next.bare || !segment.bare) break;
      key = `${key}.${next.key}`;
    }
  }
  return segments.slice(from).every((rest) => rest.kind === "key" && SCHEMA_KEYS.has(rest.key));
}

/** What is wrong with a problem's path for `document`; undefined when it names a place in it (or one intended). */
export function pathFault(document: unknown, path: string): string | undefined {
  if (path === "") {
    // By design (config-problem.ts: "empty for the whole file", formatProblem shows "(file)"):
    // only a document that is not an object is a problem of the whole file.
    return isRecord(document) ? "an empty path for a document that is an object" : undefined;
  }
  if (/undefined|\[object |NaN/.test(path)) return "the path shows a value that is no key";
  const segments = parsePath(path);
  if (segments === undefined) return "the path does not read as a JSON path";
  return leads(document, segments, 0) ? undefined : "the path names no key or index of the document";
}
