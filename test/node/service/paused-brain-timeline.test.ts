/**
 * Where a message waiting for a paused brain stands in its timeline: the one whose call met the
 * 429 waits for the brain as much as the ones refused by the pause after it, and says so. A real
 * bot on port 0, the Node service in this process.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const ADMIN = "admin-secret-paused-timeline-0123456789";

interface View {
  readonly status: string;
  readonly waiting?: { readonly reason: string };
  /** Absent in a 404's problem, before the message's first events are written. */
  readonly events?: readonly { readonly type: string; readonly status?: number; readonly paused?: boolean }[];
}

let harness: ServiceHarness | undefined;
let bot: JsonTestServer | undefined;

afterEach(async () => {
  await harness?.close();
  await bot?.close();
  harness = undefined;
  bot = undefined;
});

describe("the timeline of messages waiting for a paused brain", () => {
  it("says brain_paused for the message whose call met the 429, as for the one the pause refused", async () => {
    bot = await startJsonServer(() => ({
      status: 429,
      body: { error: "slow down" },
      headers: { "retry-after": "30" },
    }));
    const h = await startHarness(
      {},
      {},
      {
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `${bot.origin}/bot` } },
        admin: { token_env: "ADMIN_SECRET" },
      },
      { ADMIN_SECRET: ADMIN },
    );
    harness = h;
    const send = async (sender: string) => {
      const response = await h.post({ sender_id: sender, text: "hello" });
      return ((await response.json()) as { message_id: string }).message_id;
    };
    const admin = async (id: string) =>
      (await (
        await fetch(`${h.baseUrl}/admin/messages/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } })
      ).json()) as View;
    const settled = (id: string) =>
      waitFor(
        async () => {
          const view = await admin(id);
          return view.events?.some((event) => event.type === "retry") ? view : undefined;
        },
        10_000,
        `the run of ${id} settled`,
      );

    const met = await settled(await send("px"));
    expect(bot.requests).toHaveLength(1);
    const refused = await settled(await send("py"));
    expect(bot.requests).toHaveLength(1);

    expect(refused).toMatchObject({ status: "waiting", waiting: { reason: "brain_paused" } });
    expect(met).toMatchObject({ status: "waiting", waiting: { reason: "brain_paused" } });
    expect(met.events?.find((event) => event.type === "brain_call")).toMatchObject({ status: 429, paused: true });
  }, 30_000);
});
