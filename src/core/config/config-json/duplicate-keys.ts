import { formatJsonPath } from "../config-problem.js";

/**
 * The JSON path of the first key that an object of `text` (valid JSON) holds twice, or
 * undefined. `JSON.parse` keeps the last of two and says nothing, so a setting written twice
 * (an edit that added a key rather than changing it) would quietly lose its first value.
 */
export function firstDuplicateKey(text: string): string | undefined {
  // One frame per open object or array: the keys seen, or the index reached.
  const frames: { keys?: Set<string>; index: number; key?: string }[] = [];
  const path = (): PropertyKey[] =>
    frames.flatMap((frame, at): PropertyKey[] => {
      const next = frames[at + 1];
      if (next === undefined) return [];
      return frame.keys === undefined ? [frame.index] : frame.key === undefined ? [] : [frame.key];
    });
  let at = 0;
  while (at < text.length) {
    const char = text[at];
    if (char === '"') {
      const end = stringEnd(text, at);
      const top = frames[frames.length - 1];
      let after = end;
      while (after < text.length && /\s/.test(text[after] ?? "")) after += 1;
      if (top?.keys !== undefined && text[after] === ":") {
        const key = JSON.parse(text.slice(at, end)) as string;
        if (top.keys.has(key)) return formatJsonPath([...path(), key]);
        top.keys.add(key);
        top.key = key;
      }
      at = end;
      continue;
    }
    if (char === "{") frames.push({ keys: new Set(), index: 0 });
    else if (char === "[") frames.push({ index: 0 });
    else if (char === "}" || char === "]") frames.pop();
    else if (char === ",") {
      const top = frames[frames.length - 1];
      if (top !== undefined && top.keys === undefined) top.index += 1;
    }
    at += 1;
  }
  return undefined;
}

/** The index just past the string that opens at `start` (its closing quote included). */
function stringEnd(text: string, start: number): number {
  let at = start + 1;
  while (at < text.length) {
    const char = text[at];
    if (char === "\\") at += 2;
    else if (char === '"') return at + 1;
    else at += 1;
  }
  return at;
}
