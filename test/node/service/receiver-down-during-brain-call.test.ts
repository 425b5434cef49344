/**
 * A message whose brain call was under way when the receiver went down: its reply waits behind
 * the circuit, spending no attempt, instead of being posted into the outage. Before, each run
 * in flight at that moment made one POST more (each waiting out `timeout_ms` on a receiver
 * that hangs). In the main thread, and on the delivery thread with a `state_dir`, which hears
 * of the circuit with each stored step.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const ADMIN = "admin-secret-0123456789abcdefghijkl";
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function messageStatus(h: ServiceHarness, id: string): Promise<Record<string, unknown> | undefined> {
  const response = await fetch(`${h.baseUrl}/admin/messages/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  if (response.status !== 200) {
    await response.body?.cancel();
    return undefined;
  }
  return (await response.json()) as Record<string, unknown>;
}

describe.each([
  ["in the main thread", false],
  ["on the delivery thread with a state_dir", true],
])("a reply made while the receiver went down, %s", (_, thread) => {
  it("waits behind the circuit instead of being posted into the outage", async () => {
    let release: () => void = () => undefined;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(async () => release());
    let slowAsked = false;
    const bot = await startJsonServer(async (request) => {
      const { message } = request.body as { message: { text: string } };
      if (message.text === "slow") {
        slowAsked = true;
        await released;
      }
      return { status: 200, body: { text: `re: ${message.text}` } };
    });
    cleanups.push(() => bot.close());
    const posted: string[] = [];
    const stateDir = thread ? await mkdtemp(join(tmpdir(), "webhook-channel-down-")) : undefined;
    if (stateDir !== undefined) cleanups.push(() => rm(stateDir, { recursive: true, force: true }));
    const h = await startHarness(
      // Down at the first failure; no probe within the test.
      { delivery: { circuit_failures: 1, initial_delay_ms: 600_000, max_delay_ms: 600_000 } },
      {
        status: (reply) => {
          posted.push(String((reply.body as { text?: unknown }).text));
          return 503;
        },
      },
      {
        brains: { bot: { type: "http", url: `${bot.origin}/chat` } },
        routes: [{ channel: "webhook", brain: "bot" }],
        admin: { token_env: "ADMIN_SECRET" },
        ...(stateDir === undefined ? {} : { state_dir: stateDir, delivery_thread: true }),
      },
      { ADMIN_SECRET: ADMIN },
    );
    cleanups.push(() => h.close());
    const slow = (await (await h.post({ sender_id: "slow-one", text: "slow" })).json()) as { message_id: string };
    await waitFor(() => (slowAsked ? true : undefined), 5_000, "the slow brain call");
    await (await h.post({ sender_id: "fast-one", text: "fast" })).body?.cancel();
    await waitFor(() => (posted.includes("re: fast") ? true : undefined), 5_000, "the POST that takes it down");
    await waitFor(
      () => (h.logs.some((line) => String(line.msg).startsWith("receiver down")) ? true : undefined),
      5_000,
      "the receiver down",
    );
    release();
    const held = await waitFor(
      async () => {
        const timeline = await messageStatus(h, slow.message_id);
        return timeline?.status === "waiting" ? timeline : undefined;
      },
      10_000,
      "the slow message held",
    );
    expect(held).toMatchObject({ waiting: { reason: "receiver_down" } });
    expect(posted).toEqual(["re: fast"]);
  });
});
