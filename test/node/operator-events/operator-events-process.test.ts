/**
 * Operator events end to end, through the built service (`node dist/node.js`) and real sockets
 * on port 0: a bot that answers 429 once (the brain pauses, then resumes), a receiver that
 * refuses one reply (a dead letter) and then goes down and comes back, and an operator endpoint
 * that verifies every event as a team's endpoint would, with the sample receiver's own check.
 */
import { randomBytes } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { createSignatureCheck } from "../../../src/node/receiver/signature-check.js";
import { nodeKeyPair } from "../../support/ed25519-pair.js";
import { type JsonTestServer, type RecordedRequest, startJsonServer } from "../../support/json-test-server.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const SECRET = "operator-events-inbound-secret-0123456789";
const OPS_SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const OPS_KEY = nodeKeyPair();

let spawned: Spawned | undefined;
let receiver: Receiver | undefined;
let bot: JsonTestServer | undefined;
let operator: JsonTestServer | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await Promise.all([receiver?.close(), bot?.close(), operator?.close()]);
  spawned = undefined;
  receiver = undefined;
  bot = undefined;
  operator = undefined;
});

interface EventBody {
  readonly type: string;
  readonly id: string;
  readonly created_at: string;
  readonly channel?: string;
  readonly data: Record<string, unknown>;
}

function headersOf(request: RecordedRequest): Record<string, string> {
  return Object.fromEntries(Object.entries(request.headers).map(([key, value]) => [key, String(value)]));
}

describe("operator events from node dist/node.js", () => {
  it("POSTs signed brain.paused, brain.resumed, message.dead_lettered, receiver.down and receiver.up", async () => {
    let botCalls = 0;
    bot = await startJsonServer((request) => {
      botCalls += 1;
      // The first call meets a rate limit: the brain pauses for everyone for a second.
      if (botCalls === 1) return { status: 429, body: { error: "slow down" }, headers: { "retry-after": "1" } };
      const { message } = request.body as { message: { text: string } };
      return { status: 200, body: { text: message.text } };
    });
    let down = false;
    receiver = await startReceiver({
      port: 0,
      status: (reply) => {
        const { text } = reply.body as { text: string };
        if (text.startsWith("poison")) return 400;
        return down ? 503 : 200;
      },
    });
    const check = await createSignatureCheck(OPS_SECRET, OPS_KEY.publicKey);
    const verdicts: string[] = [];
    operator = await startJsonServer((request) => {
      const verdict = check?.(request.raw, headersOf(request));
      verdicts.push(verdict?.ok === true ? verdict.scheme : "unsigned");
      return { status: 204 };
    });
    const events = (): EventBody[] => (operator?.requests ?? []).map((request) => request.body as EventBody);
    const eventOf = (type: string) => waitFor(() => events().find((event) => event.type === type), 10_000, type);

    const config = await writeTempConfig({
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: {
            bind: "127.0.0.1:0",
            outbound_url: `${receiver.url}?token=query-secret`,
            delivery: { circuit_failures: 2, initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 6 },
          },
        },
      ],
      routes: [{ channel: "webhook", brain: "bot" }],
      brains: { bot: { type: "http", url: `${bot.origin}/bot` } },
      operator_events: {
        url: `${operator.origin}/ops`,
        signing_secret_env: "OPS_SECRET",
        signing_key_env: "OPS_KEY",
      },
      shutdown_timeout_ms: 2_000,
    });
    spawned = spawnNode("dist/node.js", ["--config", config], {
      WEBHOOK_SECRET: SECRET,
      OPS_SECRET,
      OPS_KEY: OPS_KEY.secretKey,
    });
    const url = await listeningUrl(spawned);
    const post = async (sender: string, text: string): Promise<string> => {
      const response = await fetch(url, {
        method: "POST",
        headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
        body: JSON.stringify({ sender_id: sender, text }),
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { message_id: string }).message_id;
    };

    // The bot's 429 pauses it; the message is asked again after the pause, and its reply refused.
    const poisoned = await post("carol", "poison pill");
    const paused = await eventOf("brain.paused");
    expect(paused).toMatchObject({ data: { brain: "bot", status: 429, until: expect.any(String) } });
    expect(paused).not.toHaveProperty("channel");
    const resumed = await eventOf("brain.resumed");
    expect(resumed.data).toMatchObject({ brain: "bot", paused_ms: expect.any(Number) });
    const dead = await eventOf("message.dead_lettered");
    expect(dead).toMatchObject({
      channel: "webhook",
      data: {
        message_id: poisoned,
        conversation_id: "carol",
        step: "delivery",
        error_code: "delivery_failed",
        status: 400,
        attempts: 1,
        replay: expect.stringContaining("not kept"),
      },
    });

    // The receiver stops answering: two unanswered POSTs in a row take it down, and it comes back.
    down = true;
    await post("dave", "hello");
    const wentDown = await eventOf("receiver.down");
    expect(wentDown).toMatchObject({
      channel: "webhook",
      data: { outbound_url: receiver.url, failures: 2, next_probe_at: expect.any(String) },
    });
    down = false;
    const cameUp = await eventOf("receiver.up");
    expect(cameUp).toMatchObject({ channel: "webhook", data: { outbound_url: receiver.url } });
    expect(Number(cameUp.data.down_ms)).toBeGreaterThanOrEqual(0);

    const all = events();
    expect(all.map((event) => event.type).sort()).toEqual(
      ["brain.paused", "brain.resumed", "message.dead_lettered", "receiver.down", "receiver.up"].sort(),
    );
    // Every event verifies (v1 first: the secret and the key both sign), and has an id of its own.
    expect(verdicts).toEqual(all.map(() => "v1"));
    for (const request of operator.requests) {
      const headers = headersOf(request);
      expect(headers["webhook-signature"]?.split(" ").map((part) => part.split(",")[0])).toEqual(["v1", "v1a"]);
      expect(headers["webhook-id"]).toBe((request.body as EventBody).id);
    }
    expect(new Set(all.map((event) => event.id)).size).toBe(all.length);
    // No message text, no secret of the URL, no signing secret.
    const raw = operator.requests.map((request) => request.raw).join("\n");
    for (const secret of ["pill", "hello", "query-secret", OPS_SECRET, OPS_KEY.secretKey])
      expect(raw).not.toContain(secret);

    spawned.child.kill("SIGTERM");
    expect(await spawned.exited).toBe(0);
  });

  it("a stop while an event waits for its retry ends cleanly: the event tried once more, then given up with its line, exit 0", async () => {
    receiver = await startReceiver({ port: 0, status: () => 400 });
    // The operator endpoint fails every time: the dead letter's event waits for a retry.
    operator = await startJsonServer(() => ({ status: 500 }));
    const config = await writeTempConfig({
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          webhook: { bind: "127.0.0.1:0", outbound_url: receiver.url },
        },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      operator_events: { url: `${operator.origin}/ops`, signing_secret_env: "OPS_SECRET", timeout_ms: 300 },
      shutdown_timeout_ms: 2_000,
    });
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET, OPS_SECRET });
    const response = await fetch(await listeningUrl(spawned), {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
      body: JSON.stringify({ sender_id: "erin", text: "refused" }),
    });
    expect(response.status).toBe(200);
    await waitFor(() => ((operator?.requests.length ?? 0) > 0 ? true : undefined), 10_000, "the first attempt");
    const lines = (): { msg: string; dropped?: number }[] =>
      spawned?.lines.map((line) => JSON.parse(line) as { msg: string; dropped?: number }) ?? [];

    spawned.child.kill("SIGTERM");
    expect(await spawned.exited).toBe(0);
    const messages = lines().map((line) => line.msg);
    expect(messages).toContain("shutdown complete: every accepted message was finished");
    expect(messages).toContain("operator event not delivered: its URL did not take it");
    expect(operator?.requests.length).toBeGreaterThanOrEqual(2);
  });
});
