import { describe, expect, it } from "vitest";
import { createAdminDeadLetters } from "../../../src/core/dead-letters/create-admin-dead-letters.js";
import { createMemoryDeadLetterStore } from "../../../src/core/dead-letters/memory-dead-letter-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { deadLetter, idOf, MANY } from "../../shared/store-contracts/dead-letter-contract-letters.js";
import { createTestApp } from "../../support/test-app.js";

const ADMIN_SECRET = "replay-admin-secret-0123456789";

describe("a dead letter's replay while the service stops", () => {
  it("is refused 503 shutting_down, the letter kept listed and handed to no queue; once running it replays", async () => {
    const restored: Job[] = [];
    const store = createMemoryDeadLetterStore((job) => restored.push(job) > 0);
    const letter = deadLetter("webhook", Date.now() - 1_000);
    store.keep(letter, MANY);
    let stopping = true;
    const app = createTestApp({
      isShuttingDown: () => stopping,
      admin: {
        secret: () => ADMIN_SECRET,
        deadLetters: createAdminDeadLetters(store, undefined, ["webhook"]),
        status: { report: () => Promise.reject(new Error("not asked")) },
      },
    });
    const post = (path: string) =>
      app.request(path, { method: "POST", headers: { authorization: `Bearer ${ADMIN_SECRET}` } });

    for (const path of [`/admin/dead-letters/${idOf(letter)}/replay`, "/admin/dead-letters/replay"]) {
      const refused = await post(path);
      expect(refused.status).toBe(503);
      expect(refused.headers.get("retry-after")).toBe("5");
      expect(await refused.json()).toMatchObject({ code: "shutting_down" });
    }
    expect(restored).toEqual([]);
    expect(store.one(idOf(letter))).toBeDefined();

    stopping = false;
    expect((await post(`/admin/dead-letters/${idOf(letter)}/replay`)).status).toBe(202);
    expect(restored).toHaveLength(1);
  });
});
