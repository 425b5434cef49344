/**
 * A message of two replies whose first POST was under way when the receiver circuit went down
 * (other conversations' failures), and which the receiver then answered: the answer is the
 * receiver's recovery ("up again at the first answer, the probe's or any other"), so the
 * receiver comes up and the message's second reply, held meanwhile, is posted. It must not be
 * forgotten: the receiver would stay down, every conversation waiting, until the next probe.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startJsonServer } from "../../support/json-test-server.js";
import { startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe.each([
  ["in the main thread", false],
  ["on the delivery thread with a state_dir", true],
])("an answer that comes after the receiver went down, %s", (_, thread) => {
  it("brings the receiver up, and the rest of the message's replies are posted", async () => {
    let releaseFirst: () => void = () => undefined;
    const firstReleased = new Promise<void>((resolve) => {
      releaseFirst = resolve;
    });
    cleanups.push(async () => releaseFirst());
    const bot = await startJsonServer((request) => {
      const { message } = request.body as { message: { text: string } };
      if (message.text === "two please") return { status: 200, body: { replies: [{ text: "one" }, { text: "two" }] } };
      return { status: 200, body: { text: `re: ${message.text}` } };
    });
    cleanups.push(() => bot.close());
    const posted: string[] = [];
    let failedOnce = false;
    const receiver = await startJsonServer(async (request) => {
      const text = String((request.body as { text?: unknown }).text);
      posted.push(text);
      if (text === "one") {
        await firstReleased;
        return { status: 200, body: {} };
      }
      if (text === "re: fast" && !failedOnce) {
        failedOnce = true;
        return { status: 503, body: {} };
      }
      return { status: 200, body: {} };
    });
    cleanups.push(() => receiver.close());
    const stateDir = thread ? await mkdtemp(join(tmpdir(), "webhook-channel-answer-down-")) : undefined;
    if (stateDir !== undefined) cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    const h = await startHarness(
      // Down at the first failure; no probe within the test.
      {
        outbound_url: `${receiver.origin}/replies`,
        delivery: { circuit_failures: 1, initial_delay_ms: 600_000, max_delay_ms: 600_000 },
      },
      {},
      {
        brains: { bot: { type: "http", url: `${bot.origin}/chat` } },
        routes: [{ channel: "webhook", brain: "bot" }],
        ...(stateDir === undefined ? {} : { state_dir: stateDir, delivery_thread: true }),
      },
    );
    cleanups.push(() => h.close());
    await (await h.post({ sender_id: "multi", text: "two please" })).body?.cancel();
    await waitFor(() => (posted.includes("one") ? true : undefined), 5_000, "the first reply's POST under way");
    await (await h.post({ sender_id: "fast-one", text: "fast" })).body?.cancel();
    await waitFor(
      () => (h.logs.some((line) => String(line.msg).startsWith("receiver down")) ? true : undefined),
      5_000,
      "the receiver down",
    );
    // The receiver answers the first reply: it is up.
    releaseFirst();
    await waitFor(() => (posted.includes("two") ? true : undefined), 5_000, "the second reply posted");
    expect(h.logs.some((line) => String(line.msg).startsWith("receiver up"))).toBe(true);
    expect(posted.filter((text) => text === "one")).toEqual(["one"]);
  }, 20_000);
});
