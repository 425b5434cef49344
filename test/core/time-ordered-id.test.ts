import { describe, expect, it } from "vitest";
import { timeOrderedId } from "../../src/core/clock.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe("message ids (UUIDv7)", () => {
  it("are RFC 9562 version 7 UUIDs, unique across thousands made in the same milliseconds", () => {
    const ids = Array.from({ length: 5_000 }, () => timeOrderedId());
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("sort in the order they were made, many within one millisecond and past the counter's 4,096", () => {
    const ids = Array.from({ length: 10_000 }, () => timeOrderedId());
    expect([...ids].sort()).toEqual(ids);
  });

  it("carry the time they were made in their first 48 bits, so later ids sort after earlier ones", async () => {
    const before = Date.now();
    const first = timeOrderedId();
    await new Promise((resolve) => setTimeout(resolve, 5));
    const second = timeOrderedId();
    const millis = Number.parseInt(first.slice(0, 8) + first.slice(9, 13), 16);
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(millis).toBeLessThanOrEqual(Date.now());
    expect(second > first).toBe(true);
  });
});
