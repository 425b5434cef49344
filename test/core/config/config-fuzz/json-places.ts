import { isRecord } from "../../../../src/core/is-record.js";

/** One key or index of a JSON container, where a mutation can act. */
export interface Place {
  readonly parent: Record<string, unknown> | unknown[];
  readonly key: string | number;
  readonly path: readonly (string | number)[];
}

/** How deep {@link placesOf} looks: the schema's keys lie far above it; deeper is deep nesting already. */
const MAX_DEPTH = 12;

/**
 * Every value inside `holder.root` (the document), down to {@link MAX_DEPTH} levels, with its
 * container and path; the document itself is the place `root` of `holder`, path `[]`.
 */
export function placesOf(holder: { root: unknown }): Place[] {
  const places: Place[] = [{ parent: holder, key: "root", path: [] }];
  const pending: Place[] = [places[0] as Place];
  for (let place = pending.pop(); place !== undefined; place = pending.pop()) {
    if (place.path.length >= MAX_DEPTH) continue;
    const value = valueAt(place);
    const children: [string | number, unknown][] = Array.isArray(value)
      ? value.slice(0, 50).map((child: unknown, index) => [index, child])
      : isRecord(value)
        ? Object.entries(value).slice(0, 50)
        : [];
    for (const [key, child] of children) {
      const next: Place = { parent: value as Place["parent"], key, path: [...place.path, key] };
      places.push(next);
      if (child !== null && typeof child === "object") pending.push(next);
    }
  }
  return places;
}

/** The value at `place`. */
export function valueAt(place: Place): unknown {
  return (place.parent as Record<string | number, unknown>)[place.key];
}

/**
 * Sets `key` of `target` as JSON.parse does, as an own property: plain assignment of an own
 * `__proto__` key would set the prototype instead, which no parsed document has.
 */
export function putOwn(target: object, key: string | number, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Puts `value` at `place`. */
export function setAt(place: Place, value: unknown): void {
  putOwn(place.parent, place.key, value);
}

/** Removes `place` from its container: a key deleted, an array item spliced out. */
export function removeAt(place: Place): void {
  if (Array.isArray(place.parent) && typeof place.key === "number") place.parent.splice(place.key, 1);
  else delete (place.parent as Record<string | number, unknown>)[place.key];
}

/** `target` again, with `key` as an own property in front: JSON.parse makes `__proto__` an own key. */
export function withOwnKey(target: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  const entries = [[key, value], ...Object.entries(target)].map(
    ([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`,
  );
  return JSON.parse(`{${entries.join(",")}}`) as Record<string, unknown>;
}
