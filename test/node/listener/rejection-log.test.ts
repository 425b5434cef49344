import { describe, expect, it } from "vitest";
import { startHarness } from "../../support/node-service.js";

describe("a refused request's debug line", () => {
  it("names the channel on the Node fast path", async () => {
    const harness = await startHarness();
    try {
      const response = await harness.post({ sender_id: "a", text: "hi" }, { authorization: "Bearer wrong" });
      expect(response.status).toBe(401);
      expect(harness.logs).toContainEqual(
        expect.objectContaining({ msg: "request rejected", channel: "webhook", code: "unauthorized" }),
      );
    } finally {
      await harness.close();
    }
  });
});
