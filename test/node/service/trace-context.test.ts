import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseTraceContext } from "../../../src/core/http/trace-context.js";
import { type ReceivedReply, type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { configDocument } from "../../support/configs.js";
import { freePort } from "../../support/free-port.js";
import { type JsonTestServer, startJsonServer } from "../../support/json-test-server.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../../support/spawn-node.js";
import { waitFor } from "../../support/wait-for.js";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";
const TRACEPARENT = `00-${TRACE_ID}-${PARENT_ID}-01`;
const SECRET = "trace-secret-0123456789";

let harness: ServiceHarness | undefined;
let brain: JsonTestServer | undefined;
let spawned: Spawned | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  spawned?.child.kill("SIGKILL");
  await harness?.close();
  await brain?.close();
  await receiver?.close();
  harness = undefined;
  brain = undefined;
  spawned = undefined;
  receiver = undefined;
});

/** The trace context a request carried, read as the spec says. */
function traceOf(headers: Record<string, string | string[] | undefined>) {
  const value = headers.traceparent;
  return parseTraceContext(typeof value === "string" ? value : null, null);
}

async function startWithHttpBrain(deliveryThread: boolean): Promise<ServiceHarness> {
  brain = await startJsonServer(() => ({ status: 200, body: { replies: [{ text: "one" }, { text: "two" }] } }));
  return startHarness(
    {},
    {},
    {
      delivery_thread: deliveryThread,
      brains: { bot: { type: "http", url: `${brain.origin}/bot` } },
      routes: [{ channel: "webhook", brain: "bot" }],
    },
  );
}

describe("W3C Trace Context on Node", () => {
  it.each([false, true])(
    "passes an inbound traceparent to the brain and every reply with new span ids (delivery_thread: %s)",
    async (deliveryThread) => {
      harness = await startWithHttpBrain(deliveryThread);
      const response = await harness.post(
        { sender_id: "a", text: "hi" },
        { traceparent: TRACEPARENT, tracestate: "vendor=abc" },
      );
      expect(response.status).toBe(200);
      const replies = harness.replies;
      await waitFor(() => (replies.length === 2 ? true : undefined), 5_000, "two replies");

      const brainRequest = brain?.requests[0];
      expect(brainRequest?.headers.tracestate).toBe("vendor=abc");
      const spans = [traceOf(brainRequest?.headers ?? {}), ...replies.map((reply) => traceOf(reply.headers))];
      for (const span of spans) {
        expect(span?.traceId).toBe(TRACE_ID);
        expect(span?.flags).toBe("01");
        expect(span?.parentId).not.toBe(PARENT_ID);
      }
      expect(new Set(spans.map((span) => span?.parentId)).size).toBe(3);
      for (const reply of replies) expect(reply.headers.tracestate).toBe("vendor=abc");
      const accepted = harness.logs.find((line) => line.msg === "message accepted");
      expect(accepted?.trace_id).toBe(TRACE_ID);
    },
  );

  it.each([
    ["no traceparent", {}],
    ["an invalid traceparent", { traceparent: `00-${"0".repeat(32)}-${PARENT_ID}-01`, tracestate: "x=y" }],
  ])("makes a trace at accept time for a message with %s", async (_name, headers: Record<string, string>) => {
    harness = await startWithHttpBrain(false);
    const response = await harness.post({ sender_id: "a", text: "hi" }, headers);
    expect(response.status).toBe(200);
    const replies = harness.replies;
    await waitFor(() => (replies.length === 2 ? true : undefined), 5_000, "two replies");
    const made = traceOf(brain?.requests[0]?.headers ?? {});
    expect(made?.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(made?.traceId).not.toBe("0".repeat(32));
    for (const reply of replies) {
      expect(traceOf(reply.headers)?.traceId).toBe(made?.traceId);
      expect(reply.headers.tracestate).toBeUndefined();
    }
  });

  it("names the trace in the dead-letter line", async () => {
    harness = await startHarness({ delivery: { max_attempts: 1 } }, { status: () => 400 });
    expect((await harness.post({ sender_id: "a", text: "x" }, { traceparent: TRACEPARENT })).status).toBe(200);
    const logs = harness.logs;
    const letter = await waitFor(() => logs.find((line) => String(line.msg).startsWith("dead letter:")));
    expect(letter.trace_id).toBe(TRACE_ID);
  });

  it("keeps a message's trace across kill -9 with state_dir", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-trace-"));
    const port = await freePort();
    const config = await writeTempConfig(
      configDocument(
        {
          bind: "127.0.0.1:0",
          outbound_url: `http://127.0.0.1:${port}/replies`,
          delivery: { initial_delay_ms: 50, max_delay_ms: 200, max_attempts: 1000 },
        },
        { state_dir: stateDir },
      ),
    );
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    const url = await listeningUrl(spawned);
    const response = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json", traceparent: TRACEPARENT },
      body: JSON.stringify({ sender_id: "a", text: "survive" }),
    });
    expect(response.status).toBe(200);
    spawned.child.kill("SIGKILL");
    await spawned.exited;

    const replies: ReceivedReply[] = [];
    receiver = await startReceiver({ port, onReply: (reply) => replies.push(reply) });
    spawned = spawnNode("dist/node.js", ["--config", config], { WEBHOOK_SECRET: SECRET });
    await listeningUrl(spawned);
    const reply = await waitFor(() => replies[0], 10_000, "the resumed reply");
    expect(traceOf(reply.headers)?.traceId).toBe(TRACE_ID);
    expect(traceOf(reply.headers)?.parentId).not.toBe(PARENT_ID);
  });
});
