import { describe, expect, it } from "vitest";
import { createAdminDeadLetters } from "../../../src/core/dead-letters/create-admin-dead-letters.js";
import { createMemoryDeadLetterStore } from "../../../src/core/dead-letters/memory-dead-letter-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { deadLetter, MANY } from "../../shared/store-contracts/dead-letter-contract-letters.js";
import { createTestApp } from "../../support/test-app.js";

const ADMIN_SECRET = "replay-body-admin-secret-0123456789";

describe("the bulk replay's body", () => {
  it.each([
    ['{"chanel":"webhook"}', "chanel"],
    ['{"id":["m1"]}', "id"],
    ['{"channel":"webhook","limit":1}', "limit"],
  ])("refuses %s with 400 invalid_message naming the key, and replays nothing", async (body, key) => {
    const restored: Job[] = [];
    const store = createMemoryDeadLetterStore((job) => restored.push(job) > 0);
    store.keep(deadLetter("webhook", Date.now() - 1_000), MANY);
    const app = createTestApp({
      admin: {
        secret: () => ADMIN_SECRET,
        deadLetters: createAdminDeadLetters(store, undefined, ["webhook"]),
        status: { report: () => Promise.reject(new Error("not asked")) },
      },
    });
    const response = await app.request("/admin/dead-letters/replay", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_SECRET}`, "content-type": "application/json" },
      body,
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ code: "invalid_message", errors: [{ field: key }] });
    expect(restored).toEqual([]);
  });
});
