/**
 * An OpenAI-compatible brain inside workerd, against a real server (the scripted upstream, on
 * Node): its limiter holds for the isolate (docs/brains.md#limits), shared by every
 * conversation object there, so calls wait for a slot across objects, a 429 pauses the brain for
 * all of them, and the `usage` of its answers reaches the Analytics Engine data points. The Node
 * twin of the storm is test/core/brain/limits/brain-limits-pauses.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { openAiCompletion, openAiRateLimited, scenario } from "./support/scripted-upstream-client.js";
import { channelConfig, freshConversation, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

/** The configuration of one channel routed to `local`, an OpenAI-compatible brain at `baseUrl`. */
function openAiConfig(outboundUrl: string, baseUrl: string, local: Record<string, unknown> = {}, logLevel = "info") {
  return channelConfig({
    // Retries as quick as a pause allows, and enough of them for several pauses.
    delivery: { initial_delay_ms: 50, max_delay_ms: 5_000, max_attempts: 20 },
    webhook: { outbound_url: outboundUrl },
    top: {
      log_level: logLevel,
      brains: { local: { type: "openai", base_url: baseUrl, model: "test-model", ...local } },
      routes: [{ channel: "webhook", brain: "local" }],
    },
  });
}

/** The first message of each conversation, as the inbound queue delivers it; the objects are cleaned up after the test. */
function firstMessages(conversations: readonly string[]) {
  return conversations.map((conversationId) => {
    conversation(conversationId);
    return delivered(queuedMessage({ conversationId, text: conversationId }));
  });
}

/** How far the runtime's clock, which moves with I/O, may stand behind the test's. */
const CLOCK_SLACK_MS = 50;

describe("an OpenAI-compatible brain inside workerd", () => {
  it("pauses for every conversation object of the isolate after a 429: calls during the pause are refused without reaching the server, and answered after it", async () => {
    const { lines } = captureLogs();
    const receiver = await scenario({ status: 200 });
    // The server answers its first call 429 and every later one: a call that reached it during the
    // pause would be answered, and caught below by its time. Scripting the answer anew after the
    // storm raced the first conversation's own retry, which comes at the pause's end, on a loaded
    // machine.
    const llm = await scenario(openAiRateLimited(4), openAiCompletion("the model answers"));
    // More slots than conversations: the pause alone keeps the eleven from the server.
    const env = objectsUse(
      testEnv(openAiConfig(`${receiver.url}/replies`, `${llm.url}/v1`, { max_concurrency: 16 }, "debug"), {
        WEBHOOK_SECRET: SECRET,
      }),
    );
    // Each conversation is a Durable Object of its own; all of them call the brain of this isolate.
    const conversations = Array.from({ length: 12 }, () => freshConversation());
    const messages = firstMessages(conversations);
    const [first, ...rest] = messages;
    if (first === undefined) throw new Error("no messages");
    await handOver(env, [first]);
    // By the line's start: workerd's clock moves with I/O, so reading the 429's body may take a few
    // ms off the pause the line reports.
    const paused = () => lines.find((line) => String(line.msg).startsWith('brain "local" paused for '));
    await eventually(() =>
      expect(paused()).toMatchObject({ level: "warn", brain: "local", retry_after: true, upstream_status: 429 }),
    ).catch(async (error: unknown) => {
      // What reached the server and what the brain logged say which way it went wrong.
      const seen = (await llm.requests()).map((call) => call.status);
      const said = lines.filter((line) => String(line.msg).includes('"local"')).map((line) => line.msg);
      throw new Error(`no pause: the server saw ${JSON.stringify(seen)}; the brain said ${JSON.stringify(said)}`, {
        cause: error,
      });
    });
    expect(Number(paused()?.pause_ms)).toBeGreaterThan(3_000);
    expect(Number(paused()?.pause_ms)).toBeLessThanOrEqual(4_000);
    // The storm: eleven more conversations ask during the pause.
    await handOver(env, rest);
    const failed = (match: string) =>
      new Set(lines.filter((line) => String(line.msg).includes(match)).map((line) => String(line.conversation_id)));
    // The call that met the 429 is a failed attempt; the eleven refused during the pause never
    // reached the server, spend no attempt and wait for its end (a debug line each).
    await eventually(() => expect(failed("waiting for a paused brain").size).toBe(11));
    expect([...failed("waiting for a paused brain")].sort()).toEqual(conversations.slice(1).sort());
    expect([...failed("attempt failed, retrying")]).toEqual([conversations[0]]);

    // The conversations are answered once the pause is over.
    await eventually(async () => expect(await receiver.requests()).toHaveLength(12), 10_000);
    const replies = await receiver.requests();
    expect(replies.map((reply) => (reply.body as Record<string, unknown>).conversation_id).sort()).toEqual(
      [...conversations].sort(),
    );
    expect(replies.every((reply) => (reply.body as Record<string, unknown>).text === "the model answers")).toBe(true);
    // The server saw the one call in flight when the pause began, within the documented bound of
    // max_concurrency + 1, and then each conversation's retry once, none before the pause ended
    // (give or take the runtime's coarse clock).
    const resumeAt = Date.parse(String(paused()?.resume_at));
    const calls = await llm.requests();
    expect(calls.map((call) => call.status)).toEqual([429, ...Array(12).fill(200)]);
    expect(calls.slice(1).every((call) => call.receivedAt >= resumeAt - CLOCK_SLACK_MS)).toBe(true);
    expect(env.DEAD_LETTERS.sent).toEqual([]);
  });

  it("answers conversation objects that wait for a slot in turn, never more calls at once than max_concurrency", async () => {
    captureLogs();
    const receiver = await scenario({ status: 200 });
    const llm = await scenario({ ...openAiCompletion("in turn"), delayMs: 200 });
    const env = objectsUse(
      testEnv(openAiConfig(`${receiver.url}/replies`, `${llm.url}/v1`, { max_concurrency: 1 }), {
        WEBHOOK_SECRET: SECRET,
      }),
    );
    // A call waiting in one object is given its slot when another object's call ends: workerd
    // refuses to settle a promise across objects, so the waiting call learns it on its own timer.
    const conversations = Array.from({ length: 3 }, () => freshConversation());
    await handOver(env, firstMessages(conversations));
    await eventually(async () => expect(await receiver.requests()).toHaveLength(3), 10_000);
    expect(await llm.maxInFlight()).toBe(1);
    expect(env.DEAD_LETTERS.sent).toEqual([]);
  });

  it("lets a 429 storm reach the server at most max_concurrency + 1 times per pause while calls wait for slots", async () => {
    const { lines } = captureLogs();
    const receiver = await scenario({ status: 200 });
    // Slow enough that three calls are in flight and the rest wait when the first 429 comes.
    const llm = await scenario({ ...openAiRateLimited(1), delayMs: 150 });
    const env = objectsUse(
      testEnv(openAiConfig(`${receiver.url}/replies`, `${llm.url}/v1`, { max_concurrency: 3 }), {
        WEBHOOK_SECRET: SECRET,
      }),
    );
    const conversations = Array.from({ length: 12 }, () => freshConversation());
    await handOver(env, firstMessages(conversations));
    const pauses = () => lines.filter((line) => String(line.msg).startsWith('brain "local" paused for')).length;
    await eventually(() => expect(pauses()).toBeGreaterThanOrEqual(2), 10_000);
    await llm.script(openAiCompletion("after the storm"));
    await eventually(async () => expect(await receiver.requests()).toHaveLength(12), 15_000);

    const refused = (await llm.requests()).filter((call) => call.status === 429);
    // Each pause lets through the calls in flight when it began (at most max_concurrency, the
    // one that began it included) and one more, per the documented bound: never the waiting ones.
    expect(refused.length).toBeLessThanOrEqual(pauses() * (3 + 1));
    expect(await llm.maxInFlight()).toBeLessThanOrEqual(3);
    expect(env.DEAD_LETTERS.sent).toEqual([]);
  });

  it("writes the token usage its server reports as brain_tokens data points", async () => {
    captureLogs();
    const points: { blobs?: string[]; doubles?: number[]; indexes?: string[] }[] = [];
    const METRICS = { writeDataPoint: (point: (typeof points)[number]) => void points.push(point) };
    const receiver = await scenario({ status: 200 });
    const llm = await scenario(openAiCompletion("counted", { prompt_tokens: 42, completion_tokens: 7 }));
    const env = objectsUse(
      testEnv(openAiConfig(`${receiver.url}/replies`, `${llm.url}/v1`), { WEBHOOK_SECRET: SECRET, METRICS }),
    );
    const conversationId = freshConversation();
    conversation(conversationId);
    await handOver(env, [delivered(queuedMessage({ conversationId }))]);
    await eventually(async () => expect(await receiver.requests()).toHaveLength(1));

    expect(points.filter((point) => point.blobs?.[0] === "brain_tokens")).toEqual([
      { blobs: ["brain_tokens", "webhook", "local", "prompt"], doubles: [42, 0], indexes: ["webhook"] },
      { blobs: ["brain_tokens", "webhook", "local", "completion"], doubles: [7, 0], indexes: ["webhook"] },
    ]);
    expect(points).toContainEqual(expect.objectContaining({ blobs: ["brain_call", "webhook", "local", "ok"] }));
  });
});
