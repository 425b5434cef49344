import { describe, expect, it } from "vitest";
import { waitAtMost } from "../../src/core/wait-at-most.js";

describe("waitAtMost", () => {
  it("is true for work that settles in time, a rejection included", async () => {
    expect(await waitAtMost(Promise.resolve("done"), 1_000)).toBe(true);
    expect(await waitAtMost(Promise.reject(new Error("failed")), 1_000)).toBe(true);
  });

  it("is false once the wait ran out, the work still pending", async () => {
    expect(await waitAtMost(new Promise(() => undefined), 10)).toBe(false);
  });
});
