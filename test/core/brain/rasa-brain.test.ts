import { afterEach, describe, expect, it } from "vitest";
import { rasaWebhookUrl } from "../../../src/core/brain/rasa-brain.js";
import { conversationKey } from "../../../src/core/conversation/conversation-store.js";
import { type BrainHarness, replyTexts, startBrainHarness } from "../../support/brain-harness.js";
import { failure } from "../../support/failure.js";
import { RASA_TEST_IMAGE, type RasaServer, startRasaServer } from "../../support/rasa-server.js";

let rasa: RasaServer | undefined;
let harness: BrainHarness | undefined;

afterEach(async () => {
  await harness?.close();
  await rasa?.close();
  harness = undefined;
  rasa = undefined;
});

async function setup(url?: (origin: string) => string) {
  rasa = await startRasaServer();
  harness = await startBrainHarness({
    brains: { bot: { type: "rasa", url: url === undefined ? rasa.origin : url(rasa.origin), timeout_ms: 2_000 } },
  });
  return { rasa, harness };
}

describe("rasa brain", () => {
  it("sends the conversation id as sender, the text as message and the rest as metadata", async () => {
    const { rasa, harness } = await setup();
    await harness.send("hello", { conversationId: "c-1", senderId: "u-1" });
    expect(rasa.requests[0]?.path).toBe("/webhooks/rest/webhook");
    expect(rasa.requests[0]?.headers["content-type"]).toBe("application/json");
    expect(rasa.restBodies()[0]).toEqual({
      sender: "c-1",
      message: "hello",
      metadata: { sender_id: "u-1", conversation_id: "c-1", message_id: expect.any(String), channel: "webhook" },
    });
    expect(harness.replies.map((reply) => reply.body)).toMatchObject([
      { text: "(1) you said: hello", conversation_id: "c-1", recipient_id: "u-1", brain: "bot" },
    ]);
  });

  it("leaves memory to Rasa's tracker: no history is sent or stored, and conversations stay apart", async () => {
    const { rasa, harness } = await setup();
    await harness.send("one", { conversationId: "A" });
    await harness.send("other", { conversationId: "B" });
    await harness.send("two", { conversationId: "A" });
    expect(replyTexts(harness.replies)).toEqual(["(1) you said: one", "(1) you said: other", "(2) you said: two"]);
    for (const body of rasa.restBodies()) expect(Object.keys(body).sort()).toEqual(["message", "metadata", "sender"]);
    expect(harness.brains.get("bot")?.historyLimit).toBe(0);
    expect(await harness.store.history(conversationKey("webhook", "A"), 10)).toEqual([]);
  });

  it("turns each text and image into a reply, in order, and leaves custom payloads out", async () => {
    const { harness } = await setup();
    await harness.send("a picture and a custom payload and buttons please");
    expect(harness.replies.map((reply) => reply.body)).toMatchObject([
      { text: "(1) you said: a picture and a custom payload and buttons please" },
      { media_url: RASA_TEST_IMAGE },
      { text: "Pick one" },
    ]);
    expect(harness.replies[1]?.body).not.toHaveProperty("text");
  });

  it("sends a media-only message's URL as the text, as Rasa's connectors do", async () => {
    const { rasa, harness } = await setup();
    await harness.send(undefined, { mediaUrl: "https://example.com/a.png", mediaType: "image/png" });
    expect(rasa.restBodies()[0]).toMatchObject({
      message: "https://example.com/a.png",
      metadata: { media_url: "https://example.com/a.png", media_type: "image/png" },
    });
  });

  it("accepts the server base or the full REST channel URL", async () => {
    expect(rasaWebhookUrl("http://127.0.0.1:5005")).toBe("http://127.0.0.1:5005/webhooks/rest/webhook");
    expect(rasaWebhookUrl("http://127.0.0.1:5005/")).toBe("http://127.0.0.1:5005/webhooks/rest/webhook");
    expect(rasaWebhookUrl("https://bots.example/rasa")).toBe("https://bots.example/rasa/webhooks/rest/webhook");
    expect(rasaWebhookUrl("http://h:5005/webhooks/rest/webhook/")).toBe("http://h:5005/webhooks/rest/webhook");
    const { harness } = await setup((origin) => `${origin}/webhooks/rest/webhook`);
    await harness.send("hi");
    expect(replyTexts(harness.replies)).toEqual(["(1) you said: hi"]);
  });

  it("retries a 5xx, dead-letters a 404 with a hint, and rejects an answer that is not an array", async () => {
    const { rasa, harness } = await setup();
    rasa.failNext({ status: 500, raw: "Internal Server Error", headers: { "content-type": "text/plain" } });
    const crashed = await harness.run(harness.message("hi"));
    expect(crashed.kind).toBe("retry");
    expect(crashed.job.lastError?.message).toContain("the Rasa server answered 500");
    expect(crashed.job.lastError?.detail).toBe("Internal Server Error");

    rasa.failNext({ status: 200, body: { text: "not a list" } });
    const malformed = await failure(harness.ask("hi"));
    expect(malformed.retryable).toBe(false);
    expect(malformed.message).toContain("expected a JSON array of bot messages");

    rasa.failNext({ status: 200, body: [{ recipient_id: "x", image: "img/local.png" }] });
    const badImage = await failure(harness.ask("hi"));
    expect(badImage.message).toContain("[0].image is not an absolute http: or https: URL");

    // A path that is not the REST channel: the fake answers 404 with HTML, as Sanic does.
    const elsewhere = await startBrainHarness({ brains: { bot: { type: "rasa", url: `${rasa.origin}/nowhere` } } });
    const missing = await elsewhere.run(elsewhere.message("hi")).finally(() => elsewhere.close());
    expect(missing.kind).toBe("dead");
    expect(missing.job.lastError?.message).toContain(
      'answered 404 (is the REST channel enabled ("rest:" in credentials.yml)',
    );
  });
});
