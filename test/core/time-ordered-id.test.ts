import { afterEach, describe, expect, it, vi } from "vitest";
import { timeOrderedId } from "../../src/core/clock.js";

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

afterEach(() => {
  vi.restoreAllMocks();
});

describe("message ids (UUIDv7)", () => {
  it("are RFC 9562 version 7 UUIDs, unique across thousands made in the same milliseconds", () => {
    const ids = Array.from({ length: 5_000 }, () => timeOrderedId());
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids).size).toBe(ids.length);
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

  it("sort in the order they were made, many within one millisecond and past the counter's 4,096", () => {
    // The clock held still, behind the ids made before: every id falls in one millisecond.
    vi.spyOn(Date, "now").mockReturnValue(Date.now() - 3_600_000);
    const ids = Array.from({ length: 10_000 }, () => timeOrderedId());
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort()).toEqual(ids);
  });

  it("keep sorting after the ones made before when the clock steps back", () => {
    const start = Date.now() - 3_600_000;
    const now = vi.spyOn(Date, "now").mockReturnValue(start);
    const before = timeOrderedId();
    now.mockReturnValue(start - 60_000);
    const after = timeOrderedId();
    expect(after > before).toBe(true);
  });
});
