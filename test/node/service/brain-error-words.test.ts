/**
 * A brain server that quotes the message it was sent in its error (a validation error echoing
 * its input): its words reach the dead letter and `debug` lines only, never a `warn` or `error`
 * line, the operator event or the timeline. A real bot on port 0, the Node service in this process.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const ADMIN = "admin-secret-brain-words-0123456789";
const CARD = "4111-1111-1111-1111";
let harness: ServiceHarness | undefined;
const servers: JsonTestServer[] = [];

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

describe("a brain's error that quotes the message", () => {
  it("is kept in the dead letter's error.detail and debug lines, not in warn or error lines, events or the timeline", async () => {
    const bot = await startJsonServer((request) => ({
      status: 400,
      body: { message: `invalid input: ${JSON.stringify(request.body)}` },
    }));
    const ops = await startJsonServer(() => ({ status: 200 }));
    servers.push(bot, ops);
    harness = await startHarness(
      {},
      {},
      {
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `${bot.origin}/bot` } },
        admin: { token_env: "ADMIN_SECRET" },
        operator_events: { url: `${ops.origin}/ops`, signing_secret_env: "OPS_SECRET" },
      },
      { ADMIN_SECRET: ADMIN, OPS_SECRET: `whsec_${randomBytes(32).toString("base64")}` },
    );
    const response = await harness.post({ sender_id: "u1", text: `my card is ${CARD}` });
    const { message_id: id } = (await response.json()) as { message_id: string };
    await waitFor(() => (ops.requests.length > 0 ? true : undefined), 10_000, "the dead letter's operator event");

    const admin = (path: string) =>
      fetch(`${harness?.baseUrl}${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
    const letter = (await (await admin(`/admin/dead-letters/${id}`)).json()) as { error: Record<string, unknown> };
    expect(letter.error).toMatchObject({
      code: "brain_failed",
      status: 400,
      message: 'brain "bot": the bot answered 400',
    });
    expect(String(letter.error.detail)).toContain(CARD);

    expect(JSON.stringify(ops.requests.map((request) => request.body))).not.toContain(CARD);
    const loud = harness.logs.filter((line) => line.level === "warn" || line.level === "error");
    expect(loud.map((line) => line.msg)).toContain('dead letter: brain "bot": the bot answered 400');
    expect(JSON.stringify(loud)).not.toContain(CARD);
    expect(harness.logs.some((line) => line.level === "debug" && String(line.upstream_message).includes(CARD))).toBe(
      true,
    );
    const timeline = await waitFor(async () => {
      const view = (await (await admin(`/admin/messages/${id}`)).json()) as { status: string };
      return view.status === "dead_letter" ? view : undefined;
    }, 5_000);
    expect(JSON.stringify(timeline)).not.toContain(CARD);
  }, 30_000);
});
