import { describe, expect, it } from "vitest";
import { LruMap } from "../../src/core/lru-map.js";

function keysOf(map: LruMap<number>, candidates: readonly string[]): string[] {
  return candidates.filter((key) => map.get(key) !== undefined);
}

describe("LruMap", () => {
  it("forgets the least recently set keys first", () => {
    const map = new LruMap<number>();
    for (const [index, key] of ["a", "b", "c", "d"].entries()) map.set(key, index);
    map.set("a", 10);
    map.trimTo(2);
    expect(keysOf(map, ["a", "b", "c", "d"])).toEqual(["a", "d"]);
    expect(map.get("a")).toBe(10);
  });

  it("does not count a get as a use", () => {
    const map = new LruMap<number>();
    map.set("a", 1);
    map.set("b", 2);
    map.get("a");
    map.trimTo(1);
    expect(keysOf(map, ["a", "b"])).toEqual(["b"]);
  });

  it("keeps its order through deletes, of the oldest, the newest and one between", () => {
    const map = new LruMap<number>();
    for (const [index, key] of ["a", "b", "c", "d", "e"].entries()) map.set(key, index);
    map.delete("a");
    map.delete("e");
    map.delete("c");
    map.delete("missing");
    expect(map.size).toBe(2);
    map.set("f", 5);
    map.set("b", 1);
    map.trimTo(2);
    expect(keysOf(map, ["b", "d", "f"])).toEqual(["b", "f"]);
    map.trimTo(0);
    expect(map.size).toBe(0);
    map.set("g", 6);
    expect(map.get("g")).toBe(6);
  });

  it("holds no more than its limit while a million keys pass through", () => {
    const map = new LruMap<number>();
    for (let index = 0; index < 1_000_000; index += 1) {
      map.set(`k${index}`, index);
      map.trimTo(1_000);
    }
    expect(map.size).toBe(1_000);
    expect(map.get("k999999")).toBe(999_999);
    expect(map.get("k998999")).toBeUndefined();
  });
});
