import { describe, expect, it } from "vitest";
import { createAdminDeadLetters } from "../../../src/core/dead-letters/create-admin-dead-letters.js";
import { createMemoryDeadLetterStore } from "../../../src/core/dead-letters/memory-dead-letter-store.js";
import type { Job } from "../../../src/core/lifecycle/job.js";
import { deadLetter, idOf, MANY } from "../../shared/store-contracts/dead-letter-contract-letters.js";
import { createTestApp } from "../../support/test-app.js";
import { waitFor } from "../../support/wait-for.js";

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

describe("a bulk replay whose body is still arriving when the service begins to stop", () => {
  it("is refused 503 shutting_down, the letter kept listed and handed to no queue", async () => {
    const restored: Job[] = [];
    const store = createMemoryDeadLetterStore((job) => restored.push(job) > 0);
    const letter = deadLetter("webhook", Date.now() - 1_000);
    store.keep(letter, MANY);
    let stopping = false;
    const app = createTestApp({
      isShuttingDown: () => stopping,
      admin: {
        secret: () => ADMIN_SECRET,
        deadLetters: createAdminDeadLetters(store, undefined, ["webhook"]),
        status: { report: () => Promise.reject(new Error("not asked")) },
      },
    });
    // A body sent in two parts (chunked: no Content-Length), the second once the stop has begun.
    let pulls = 0;
    let send: ((chunk: string | null) => void) | undefined;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        return new Promise<void>((resolve) => {
          send = (chunk) => {
            if (chunk === null) controller.close();
            else controller.enqueue(new TextEncoder().encode(chunk));
            resolve();
          };
        });
      },
    });
    const answer = app.request("/admin/dead-letters/replay", {
      method: "POST",
      headers: { authorization: `Bearer ${ADMIN_SECRET}`, "content-type": "application/json" },
      body,
      duplex: "half",
    } as RequestInit);
    // The route has taken the request and is reading its body.
    await waitFor(() => (pulls > 0 && send !== undefined ? true : undefined), 5_000, "the body to be read");
    send?.(`{"ids":[${JSON.stringify(idOf(letter))}`);
    await waitFor(() => (pulls > 1 ? true : undefined), 5_000, "the rest of the body to be asked for");
    stopping = true;
    send?.("]}");
    await waitFor(() => (pulls > 2 ? true : undefined), 5_000, "the end of the body to be asked for");
    send?.(null);

    const response = await answer;
    // As a replay asked while stopping: in memory the job would be put on a queue that no longer
    // runs and be lost with the process, its letter already off the list.
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ code: "shutting_down" });
    expect(restored).toEqual([]);
    expect(store.one(idOf(letter))).toBeDefined();
  });
});
