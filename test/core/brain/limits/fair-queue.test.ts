import { describe, expect, it } from "vitest";
import { createFairQueue } from "../../../../src/core/brain/limits/fair-queue.js";

describe("fair queue", () => {
  it("hands items out in turn per key, a key that had its turn going to the back", () => {
    const queue = createFairQueue<string>();
    for (const item of ["a1", "a2", "a3"]) queue.push("a", item);
    queue.push("b", "b1");
    queue.push("c", "c1");
    queue.push("b", "b2");
    expect(queue.size).toBe(6);
    expect(queue.peek()).toBe("a1");
    expect(queue.drain()).toEqual(["a1", "b1", "c1", "a2", "b2", "a3"]);
    expect(queue.size).toBe(0);
    expect(queue.shift()).toBeUndefined();
    expect(queue.peek()).toBeUndefined();
  });

  it("gives a key that comes back after emptying its queue the last turn", () => {
    const queue = createFairQueue<string>();
    queue.push("a", "a1");
    queue.push("b", "b1");
    expect(queue.shift()).toBe("a1");
    queue.push("a", "a2");
    queue.push("c", "c1");
    expect(queue.drain()).toEqual(["b1", "a2", "c1"]);
  });
});
