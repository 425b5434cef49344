/**
 * A brain rate-limited for a while (429 with `Retry-After`) pauses for everyone, and the
 * messages waiting for it spend no attempt while it is paused: only the calls that reached it
 * count. A real bot on port 0, the Node service in this process.
 */
import { afterEach, describe, expect, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;
let bot: JsonTestServer | undefined;

afterEach(async () => {
  await harness?.close();
  await bot?.close();
  harness = undefined;
  bot = undefined;
});

describe("messages waiting for a paused brain", () => {
  it("are all answered once it resumes, none dead-lettered, though its 429s outlast their attempts", async () => {
    let limitedUntil: number | undefined;
    let limited = 0;
    bot = await startJsonServer(async () => {
      await new Promise((resolve) => setTimeout(resolve, 50));
      limitedUntil ??= Date.now() + 3_500;
      if (Date.now() < limitedUntil) {
        limited += 1;
        return { status: 429, body: { error: "slow down" }, headers: { "retry-after": "1" } };
      }
      return { status: 200, body: { text: "ok" } };
    });
    harness = await startHarness(
      // Retries every 200 ms at most, two attempts: a refusal or a 429 that counted would spend them.
      { delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 2 } },
      {},
      {
        routes: [{ channel: "webhook", brain: "bot" }],
        brains: { bot: { type: "http", url: `${bot.origin}/bot`, max_concurrency: 1 } },
      },
    );
    const ids: string[] = [];
    for (let index = 0; index < 8; index += 1) {
      const response = await harness.post({ sender_id: `s${index}`, text: `m${index}` });
      expect(response.status).toBe(200);
      ids.push(((await response.json()) as { message_id: string }).message_id);
    }
    const answered = () =>
      new Set(harness?.replies.map((reply) => (reply.body as { in_reply_to: string }).in_reply_to));
    await waitFor(() => (ids.every((id) => answered().has(id)) ? true : undefined), 20_000, "every message answered");
    expect(harness.logs.filter((line) => String(line.msg).startsWith("dead letter"))).toEqual([]);
    // One call reached the bot per pause (max_concurrency 1), about one pause a second.
    expect(limited).toBeGreaterThanOrEqual(3);
    expect(limited).toBeLessThanOrEqual(5);
  }, 30_000);
});
