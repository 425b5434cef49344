/**
 * `waiting.behind_message_id` names the message the lane really runs before this one. A message
 * sent with an Idempotency-Key joins its lane only once its key is reserved, so one sent at the
 * same moment without a key can join first although it was accepted later: the lane that holds
 * them says which is ahead, not their acceptance times.
 */
import { connect, type Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SECRET, type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

const ADMIN = "admin-secret-behind-0123456789abcdef";
let harness: ServiceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

interface View {
  readonly status: string;
  readonly accepted_at: string;
  readonly waiting?: { readonly reason: string; readonly behind_message_id?: string };
}

async function view(h: ServiceHarness, id: string): Promise<View> {
  const r = await fetch(`${h.baseUrl}/admin/messages/${id}`, { headers: { authorization: `Bearer ${ADMIN}` } });
  return (await r.json()) as View;
}

function open(baseUrl: string): Promise<Socket> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => resolve(socket));
    socket.on("error", reject);
  });
}

function request(body: unknown, headers: Record<string, string>): string {
  const text = JSON.stringify(body);
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join("");
  return `POST /webhook HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${SECRET}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\n${extra}connection: close\r\n\r\n${text}`;
}

/** The message_id of the one answer `socket` gets. */
function answerOf(socket: Socket): Promise<string> {
  return new Promise((resolve, reject) => {
    let raw = "";
    socket.on("data", (chunk: Buffer) => {
      raw += chunk.toString("utf8");
    });
    socket.on("close", () => {
      const id = /"message_id":"([^"]+)"/.exec(raw)?.[1];
      if (id === undefined) reject(new Error(`no message_id in ${raw}`));
      else resolve(id);
    });
  });
}

describe("behind_message and the lane's order", () => {
  it("names as ahead the message the lane runs first", async () => {
    let down = true;
    const delivered: string[] = [];
    harness = await startHarness(
      { delivery: { initial_delay_ms: 1500, max_delay_ms: 1500, max_attempts: 10 } },
      {
        status: (reply) => {
          if (down) return 503;
          delivered.push(String((reply.body as { text?: unknown }).text));
          return 200;
        },
      },
      { admin: { token_env: "ADMIN_SECRET" } },
      { ADMIN_SECRET: ADMIN },
    );
    const h = harness;
    const head = ((await (await h.post({ sender_id: "c", text: "head" })).json()) as { message_id: string }).message_id;
    await waitFor(async () => ((await view(h, head)).status === "retrying" ? true : undefined), 5000, "head retrying");
    // Sent in the same instant on two open connections, A first: A with an Idempotency-Key, B without.
    const [socketA, socketB] = await Promise.all([open(h.baseUrl), open(h.baseUrl)]);
    const answers = [answerOf(socketA), answerOf(socketB)];
    socketA.write(request({ sender_id: "c", text: "A" }, { "idempotency-key": "key-a" }));
    socketB.write(request({ sender_id: "c", text: "B" }, {}));
    const [a = "", b = ""] = await Promise.all(answers);
    // The timeline is written a moment later than the 200.
    const waiting = (id: string) =>
      waitFor(async () => {
        const seen = await view(h, id);
        return seen.waiting === undefined ? undefined : seen;
      });
    const views = { A: await waiting(a), B: await waiting(b) };
    down = false;
    await waitFor(() => (delivered.length >= 3 ? true : undefined), 10_000, "every reply delivered");
    expect(delivered[0]).toBe("head");
    // The lane's real order, as the receiver saw it.
    const [first, second] = delivered.slice(1) as ["A" | "B", "A" | "B"];
    const ids = { A: a, B: b };
    expect(views[first].waiting).toEqual({ reason: "behind_message", behind_message_id: head });
    expect(views[second].waiting).toEqual({ reason: "behind_message", behind_message_id: ids[first] });
  }, 30_000);
});
