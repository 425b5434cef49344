import { afterEach, describe, expect, it } from "vitest";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import {
  type OpenAiCompatibleServer,
  openAiError,
  startOpenAiCompatibleServer,
} from "../../support/openai-compatible-server.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;
let local: OpenAiCompatibleServer | undefined;
let bot: JsonTestServer | undefined;

afterEach(async () => {
  await harness?.close();
  await local?.close();
  await bot?.close();
  harness = undefined;
  local = undefined;
  bot = undefined;
});

describe("fallback brains on the Node service", () => {
  it.each([false, true])(
    "delivers the fallback's reply, naming it, when the routed brain answers 503 (delivery_thread: %s)",
    async (deliveryThread) => {
      local = await startOpenAiCompatibleServer();
      local.failNext(openAiError(503, "model is loading", "server_error", null));
      bot = await startJsonServer(() => ({ status: 200, body: { text: "the bot answers" } }));
      harness = await startHarness(
        {},
        {},
        {
          delivery_thread: deliveryThread,
          routes: [{ channel: "webhook", brain: "local" }],
          brains: {
            local: { type: "openai", base_url: local.baseUrl, model: "test-model", fallback: ["bot"] },
            bot: { type: "http", url: `${bot.origin}/bot` },
          },
        },
      );
      const response = await harness.post({ sender_id: "a", text: "hi" });
      expect(response.status).toBe(200);
      const replies = harness.replies;
      const [reply] = await waitFor(() => (replies.length === 1 ? replies : undefined), 5_000, "the reply");
      expect(reply?.body).toMatchObject({ text: "the bot answers", brain: "bot", sequence: 1 });
      expect(local.chatBodies()).toHaveLength(1);
      // On the delivery thread the line comes to the main thread's logger a moment later.
      const logs = harness.logs;
      const warned = await waitFor(
        () =>
          logs.find((line) => line.level === "warn" && line.msg === 'brain "local" failed; fallback "bot" answered'),
        5_000,
        "the fallback's warn line",
      );
      expect(warned).toMatchObject({ brain: "bot", failed: [{ brain: "local", upstream_status: 503 }] });
    },
  );
});
