import { type JsonTestServer, type RecordedRequest, startJsonServer, type TestResponse } from "./json-test-server.js";

/** The image the fake bot sends when a message asks for a picture. */
export const RASA_TEST_IMAGE = "https://i.imgur.com/nGF1K8f.jpg";

/** The fake Rasa server. */
export interface RasaServer extends JsonTestServer {
  /** Bodies POSTed to the REST channel, in order. */
  restBodies(): { sender?: unknown; message?: unknown; metadata?: unknown }[];
  /** The next REST channel requests are answered with these, in order. */
  failNext(...responses: TestResponse[]): void;
}

/**
 * A local server that answers as Rasa's REST input channel does (`POST
 * /webhooks/rest/webhook`, body `{ sender, message, metadata }`, answer a JSON array of
 * `{ recipient_id, text }` / `{ recipient_id, image }` / `{ recipient_id, custom }`). Like
 * Rasa, it keeps a tracker per `sender`: each text names how many messages that sender sent.
 * "picture" in a message adds an image; "custom" adds a custom payload.
 */
export async function startRasaServer(): Promise<RasaServer> {
  const trackers = new Map<string, string[]>();
  const scripted: TestResponse[] = [];

  const handle = (request: RecordedRequest): TestResponse => {
    if (request.method !== "POST" || request.path !== "/webhooks/rest/webhook") {
      return { status: 404, raw: "<!DOCTYPE html><html><body>Requested URL not found</body></html>" };
    }
    const next = scripted.shift();
    if (next !== undefined) return next;
    const body = request.body as { sender?: unknown; message?: unknown } | undefined;
    if (body === undefined || typeof body.message !== "string") {
      return {
        status: 400,
        body: {
          version: "3.6.20",
          status: "failure",
          message: "No text message in the request.",
          reason: "BadRequest",
          code: 400,
        },
      };
    }
    // Rasa's REST channel uses "default" when no sender is given.
    const sender = typeof body.sender === "string" ? body.sender : "default";
    const tracker = trackers.get(sender) ?? [];
    tracker.push(body.message);
    trackers.set(sender, tracker);
    const answer: Record<string, unknown>[] = [
      { recipient_id: sender, text: `(${tracker.length}) you said: ${body.message}` },
    ];
    if (body.message.includes("picture")) answer.push({ recipient_id: sender, image: RASA_TEST_IMAGE });
    if (body.message.includes("custom")) answer.push({ recipient_id: sender, custom: { kind: "carousel" } });
    if (body.message.includes("buttons")) {
      answer.push({
        recipient_id: sender,
        text: "Pick one",
        buttons: [{ title: "great", payload: "/mood_great" }],
      });
    }
    return { status: 200, body: answer };
  };

  const server = await startJsonServer(handle);
  return {
    ...server,
    restBodies: () =>
      server.requests
        .filter((request) => request.path === "/webhooks/rest/webhook")
        .map((request) => request.body as { sender?: unknown; message?: unknown; metadata?: unknown }),
    failNext: (...responses) => {
      scripted.push(...responses);
    },
  };
}
