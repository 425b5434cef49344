/**
 * `messages show` says why a message that has not ended waits: a receiver that is down, and
 * a message behind it in its conversation, from a real service whose receiver refuses.
 */
import { afterEach, describe, expect, it } from "vitest";
import { startJsonServer } from "../support/json-test-server.js";
import { ADMIN, adminGet } from "../support/message-timelines.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { waitFor } from "../support/wait-for.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("messages show of a message that waits", () => {
  it("gives the reason: the receiver is down, or behind an earlier message of the conversation", async () => {
    const receiver = { up: false };
    harness = await startHarness(
      { delivery: { circuit_failures: 1, initial_delay_ms: 1_000, max_delay_ms: 60_000 } },
      { status: () => (receiver.up ? 200 : 503) },
      { admin: { token_env: "ADMIN_SECRET" } },
      { ADMIN_SECRET: ADMIN },
    );
    const h = harness;
    const send = async (text: string) =>
      ((await (await h.post({ sender_id: "cli", conversation_id: "c-wait", text })).json()) as { message_id: string })
        .message_id;
    const first = await send("first");
    const second = await send("second");
    const view = await waitFor(
      async () => {
        const body = (await (await adminGet(h, `messages/${first}`)).json()) as {
          waiting?: { reason: string; until?: string };
        };
        return body.waiting?.reason === "receiver_down" ? body.waiting : undefined;
      },
      10_000,
      "the first message waiting for the receiver",
      25,
    );
    const cli = (args: string[]) =>
      runCliCaptured(["messages", ...args, "--url", h.baseUrl], { WEBHOOK_ADMIN_SECRET: ADMIN });

    const shown = await cli(["show", first]);
    expect(shown.code).toBe(0);
    expect(shown.out).toContain("status        waiting\n");
    expect(shown.out).toContain(
      `waiting       the receiver is down (outbound_url fails); sent once it answers again, or given up at ${view.until}\n`,
    );
    expect(shown.out).toMatch(/ attempt +#1 \S+: failed in \d+ ms, HTTP 503 — /);
    expect(shown.out).toMatch(/ waiting +the receiver is down; sent once it answers again, or given up at \d{4}-/);

    const behind = await cli(["show", second]);
    expect(behind.out).toContain(`waiting       behind message ${first} of its conversation, which has not ended\n`);
    const waitingOnes = JSON.parse((await cli(["list", "--status", "waiting", "--json"])).out) as {
      items: { message_id: string }[];
    };
    expect(waitingOnes.items.map((item) => item.message_id)).toContain(first);

    receiver.up = true;
    await waitFor(
      async () =>
        (await cli(["list", "--conversation", "c-wait"])).out.match(/ delivered /g)?.length === 2 ? true : undefined,
      15_000,
      "both messages delivered",
      50,
    );
    expect((await cli(["show", first])).out).not.toContain("\nwaiting ");
  });

  it("says a message whose brain call is under way is in progress, not waiting for its turn", async () => {
    let answer: (() => void) | undefined;
    const bot = await startJsonServer(
      () =>
        new Promise((resolve) => {
          answer = () => resolve({ status: 200, body: { text: "at last" } });
        }),
    );
    try {
      harness = await startHarness(
        {},
        {},
        {
          admin: { token_env: "ADMIN_SECRET" },
          routes: [{ channel: "webhook", brain: "bot" }],
          brains: { bot: { type: "http", url: `${bot.origin}/bot` } },
        },
        { ADMIN_SECRET: ADMIN },
      );
      const h = harness;
      const id = ((await (await h.post({ sender_id: "slow", text: "think hard" })).json()) as { message_id: string })
        .message_id;
      await waitFor(() => (answer === undefined ? undefined : true), 10_000, "the brain call");
      // The timeline is written in batches: its accepted event is there within a moment.
      await waitFor(async () => ((await adminGet(h, `messages/${id}`)).status === 200 ? true : undefined), 5_000);
      const shown = await runCliCaptured(["messages", "show", id, "--url", h.baseUrl], { WEBHOOK_ADMIN_SECRET: ADMIN });
      expect(shown.out).toContain("status        accepted\n");
      expect(shown.out).toContain("waiting       under way now: its brain call or a reply's POST");
      answer?.();
      await waitFor(() => (h.replies.length === 1 ? true : undefined), 10_000, "the reply");
      const body = await waitFor(async () => {
        const view = (await (await adminGet(h, `messages/${id}`)).json()) as { status: string; waiting?: unknown };
        return view.status === "delivered" ? view : undefined;
      }, 10_000);
      expect(body.waiting).toBeUndefined();
    } finally {
      await bot.close();
    }
  });
});
