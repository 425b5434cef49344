import { afterEach, describe, expect, it, vi } from "vitest";
import { conversation, eventually, forgetConversations, handOver, objectsUse } from "./support/conversations.js";
import { captureLogs, type Delivery, fakeReceiver } from "./support/fake-receiver.js";
import { delivered, queuedMessage } from "./support/queue-messages.js";
import { channelConfig, freshConversation, OUTBOUND_URL, SECRET } from "./support/test-config.js";
import { testEnv } from "./support/test-env.js";

const BOT_URL = "https://bot.example/chat";

afterEach(async () => {
  await forgetConversations();
  vi.restoreAllMocks();
});

describe("fallback brains inside workerd", () => {
  it("answers with the http fallback when Workers AI is out of capacity, naming it, in one history", async () => {
    const { lines } = captureLogs();
    const replies: Delivery[] = [];
    const botHistories: unknown[] = [];
    fakeReceiver((delivery) => {
      if (delivery.url === BOT_URL) {
        botHistories.push(delivery.body.history);
        return Response.json({ text: "the bot answers" });
      }
      expect(delivery.url).toBe(OUTBOUND_URL);
      replies.push(delivery);
      return new Response(null, { status: 200 });
    });
    let runs = 0;
    const AI = {
      run() {
        runs += 1;
        return runs === 2
          ? Promise.reject(new Error("3040: Capacity temporarily exceeded, please try again."))
          : Promise.resolve({ response: `ai reply ${runs}` });
      },
    };
    const config = channelConfig({
      top: {
        brains: {
          ai: { type: "workers-ai", model: "@cf/meta/llama-3.1-8b-instruct", fallback: ["bot"] },
          bot: { type: "http", url: BOT_URL },
        },
        routes: [{ channel: "webhook", brain: "ai" }],
      },
    });
    const conversationId = freshConversation();
    // Registered, so that afterEach forgets the conversation's object.
    conversation(conversationId);
    for (const [index, text] of ["first", "second"].entries()) {
      const env = objectsUse(testEnv(config, { WEBHOOK_SECRET: SECRET, AI }));
      await handOver(env, [delivered(queuedMessage({ conversationId, text }))]);
      await eventually(() => expect(replies).toHaveLength(index + 1));
    }

    expect(replies.map((reply) => [reply.body.text, reply.body.brain, reply.body.sequence])).toEqual([
      ["ai reply 1", "ai", 1],
      ["the bot answers", "bot", 2],
    ]);
    expect(botHistories).toEqual([
      [
        expect.objectContaining({ role: "user", text: "first" }),
        expect.objectContaining({ role: "assistant", text: "ai reply 1" }),
      ],
    ]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: "warn", msg: 'brain "ai" failed; fallback "bot" answered', brain: "bot" }),
    );
  });
});
