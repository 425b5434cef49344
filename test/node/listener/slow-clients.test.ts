import { afterEach, describe, expect, it } from "vitest";
import type { Clock } from "../../../src/core/clock.js";
import { randomId, systemClock } from "../../../src/core/clock.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { silentLogger } from "../../../src/core/log/logger.js";
import { buildListeners } from "../../../src/node/listener/build-listeners.js";
import { DEFAULT_LISTENER_LIMITS, type ListenerLimits } from "../../../src/node/listener/listener-limits.js";
import { type Receiver, startReceiver } from "../../../src/node/receiver/sample-receiver.js";
import { type RunningService, startService } from "../../../src/node/service/start-service.js";
import { manualClock } from "../../support/brain-harness.js";
import { configDocument } from "../../support/configs.js";
import { createLogSink } from "../../support/log-sink.js";
import { SECRET } from "../../support/node-service.js";
import { openRawClient, type RawClient } from "../../support/raw-client.js";
import { waitFor } from "../../support/wait-for.js";
import { sample, scrape } from "../metrics/scrape.js";

/** The service's limits, shortened so that each can be watched with real sockets in seconds. */
const SHORT: ListenerLimits = {
  headersTimeoutMs: 1_000,
  requestTimeoutMs: 2_000,
  keepAliveTimeoutMs: 500,
  checkIntervalMs: 200,
  refusalWarningIntervalMs: 60_000,
};
/** Slack for a loaded machine: timers, the loopback round trip. */
const MARGIN_MS = 400;
/** Node closes an idle keep-alive connection one second after the advertised timeout. */
const NODE_KEEP_ALIVE_GRACE_MS = 1_000;

interface Limited {
  readonly service: RunningService;
  readonly port: number;
  readonly logs: Record<string, unknown>[];
  readonly receiver: Receiver;
}

let running: Limited | undefined;
const clients: RawClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.socket.destroy();
  await running?.service.stop(1_000);
  await running?.receiver.close();
  running = undefined;
});

async function startLimited(webhook: Record<string, unknown> = {}, limits = SHORT, clock?: Clock): Promise<Limited> {
  const receiver = await startReceiver({ port: 0 });
  const result = validateConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: receiver.url, ...webhook }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const { logger, lines } = createLogSink();
  const service = await startService({
    config: result.config,
    secrets: new Map([["webhook", SECRET]]),
    logger,
    listenerLimits: limits,
    ...(clock === undefined ? {} : { clock }),
  });
  const port = service.listeners[0]?.port;
  if (port === undefined) throw new Error("no listener");
  running = { service, port, logs: lines, receiver };
  return running;
}

async function client(port: number): Promise<RawClient> {
  const opened = await openRawClient(port);
  clients.push(opened);
  return opened;
}

/** Starts a request whose headers never end: one more header line every 100 ms. */
async function headerDripper(port: number): Promise<RawClient> {
  const dripper = await client(port);
  dripper.drip("POST /webhook HTTP/1.1\r\nHost: localhost\r\n", "X-Drip: a\r\n", 100);
  return dripper;
}

function post(port: number): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/webhook`, {
    method: "POST",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });
}

describe("slow clients on the Node listener", () => {
  it("closes a client that drips its headers once headersTimeout is over, answering 408", async () => {
    const { port } = await startLimited();
    const dripper = await headerDripper(port);
    const lived = (await dripper.closed) - dripper.connectedAt;
    expect(lived).toBeGreaterThanOrEqual(SHORT.headersTimeoutMs - 50);
    expect(lived).toBeLessThanOrEqual(SHORT.headersTimeoutMs + SHORT.checkIntervalMs + MARGIN_MS);
    expect(dripper.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(dripper.received()).toContain('"code":"request_timeout"');
  });

  it("counts a body that took too long as the channel's 408, and a client that went away as no answer", async () => {
    const { port } = await startLimited();
    const head = `POST /webhook HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n`;
    const gone = await client(port);
    gone.socket.write(`${head}{"sender`);
    gone.socket.resetAndDestroy();
    const slow = await client(port);
    slow.socket.write(`${head}{"sender`);
    await slow.closed;
    expect(slow.received()).toMatch(/^HTTP\/1\.1 408 /);
    const text = await scrape(`http://127.0.0.1:${port}`);
    expect(sample(text, "webhook_channel_requests_total", { channel: "webhook", code: "408" })).toBe(1);
    expect(sample(text, "webhook_channel_requests_total", { channel: "webhook", code: "400" })).toBeUndefined();
  });

  it("closes a client that sends no byte at all once headersTimeout is over", async () => {
    const { port } = await startLimited();
    const silent = await client(port);
    const lived = (await silent.closed) - silent.connectedAt;
    expect(lived).toBeGreaterThanOrEqual(SHORT.headersTimeoutMs - 50);
    expect(lived).toBeLessThanOrEqual(SHORT.headersTimeoutMs + SHORT.checkIntervalMs + MARGIN_MS);
  });

  it("closes an authorized client that drips its body once requestTimeout is over", async () => {
    const { port, logs } = await startLimited();
    const dripper = await client(port);
    dripper.drip(
      `POST /webhook HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"text":"`,
      "a",
      100,
    );
    const lived = (await dripper.closed) - dripper.connectedAt;
    expect(lived).toBeGreaterThanOrEqual(SHORT.requestTimeoutMs - 50);
    expect(lived).toBeLessThanOrEqual(SHORT.requestTimeoutMs + SHORT.checkIntervalMs + MARGIN_MS);
    expect(dripper.received()).toMatch(/^HTTP\/1\.1 408 /);
    expect(dripper.received()).toContain('"code":"request_timeout"');
    expect(logs.filter((line) => line.level === "error")).toEqual([]);
  });

  it("closes an idle keep-alive connection after keepAliveTimeout", async () => {
    const { port } = await startLimited();
    const idle = await client(port);
    idle.socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n");
    await waitFor(() => (idle.received().includes('{"status":"ok"}') ? true : undefined), 2_000, "the answer");
    const answeredAt = Date.now();
    expect(idle.received()).toMatch(/^Connection: keep-alive\r$/im);
    const idleFor = (await idle.closed) - answeredAt;
    expect(idleFor).toBeGreaterThanOrEqual(SHORT.keepAliveTimeoutMs - 50);
    expect(idleFor).toBeLessThanOrEqual(SHORT.keepAliveTimeoutMs + NODE_KEEP_ALIVE_GRACE_MS + MARGIN_MS);
  });

  it("refuses connections beyond max_connections without disturbing the open ones, and serves again once the slow ones are dropped", async () => {
    const { port, logs } = await startLimited({ max_connections: 3 });
    const drippers = [await headerDripper(port), await headerDripper(port), await headerDripper(port)];

    const refused = await client(port);
    const refusedAfter = (await refused.closed) - refused.connectedAt;
    expect(refusedAfter).toBeLessThan(SHORT.headersTimeoutMs / 2);
    expect(refused.received()).toBe("");
    await expect(post(port)).rejects.toThrow();
    expect(drippers.every((dripper) => dripper.isOpen())).toBe(true);

    const warnings = () =>
      logs.filter((line) => line.msg === "max_connections reached: new connections are refused until open ones close");
    await waitFor(() => (warnings().length > 0 ? true : undefined), 2_000, "the warning");
    expect(warnings()).toEqual([expect.objectContaining({ level: "warn", max_connections: 3, refused: 1 })]);

    await Promise.all(drippers.map((dripper) => dripper.closed));
    const response = await post(port);
    expect(response.status).toBe(200);
    expect(warnings()).toHaveLength(1);
  });

  it("warns about refused connections at most once per interval, counting those it did not log", async () => {
    const clock = manualClock();
    const { port, logs } = await startLimited(
      { max_connections: 1 },
      { ...SHORT, headersTimeoutMs: 10_000, requestTimeoutMs: 10_000 },
      clock,
    );
    await client(port);
    for (let i = 0; i < 3; i += 1) await (await client(port)).closed;
    const warnings = () =>
      logs.filter((line) => line.msg === "max_connections reached: new connections are refused until open ones close");
    expect(warnings()).toHaveLength(1);

    clock.advance(SHORT.refusalWarningIntervalMs);
    await (await client(port)).closed;
    await waitFor(() => (warnings().length === 2 ? true : undefined), 2_000, "the second warning");
    expect(warnings()[1]).toMatchObject({ refused: 3 });
  });
});

describe("the listener's defaults", () => {
  it("are the documented limits, and channels sharing a bind share the largest max_connections", () => {
    expect(DEFAULT_LISTENER_LIMITS).toEqual({
      headersTimeoutMs: 10_000,
      requestTimeoutMs: 30_000,
      keepAliveTimeoutMs: 5_000,
      checkIntervalMs: 500,
      refusalWarningIntervalMs: 60_000,
    });
    const result = validateConfig({
      channels: [
        {
          type: "webhook",
          name: "a",
          token_env: "A",
          webhook: { bind: "127.0.0.1:0", path: "/a", outbound_url: "http://127.0.0.1:9/r" },
        },
        {
          type: "webhook",
          name: "b",
          token_env: "B",
          webhook: { bind: "127.0.0.1:0", path: "/b", outbound_url: "http://127.0.0.1:9/r", max_connections: 2048 },
        },
        {
          type: "webhook",
          name: "c",
          token_env: "C",
          webhook: { bind: "127.0.0.1:1", path: "/c", outbound_url: "http://127.0.0.1:9/r" },
        },
      ],
      routes: ["a", "b", "c"].map((channel) => ({ channel, brain: "echo" })),
    });
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    const listeners = buildListeners(result.config.channels, {
      secretsFor: () => [SECRET],
      queueFor: () => ({ enqueue: () => undefined }),
      clock: systemClock,
      newId: randomId,
      logger: silentLogger,
    });
    expect(
      listeners.map(({ server }) => [
        server.headersTimeout,
        server.requestTimeout,
        server.keepAliveTimeout,
        server.maxConnections,
      ]),
    ).toEqual([
      [10_000, 30_000, 5_000, 2048],
      [10_000, 30_000, 5_000, 1024],
    ]);
  });

  it("lets the answer under way go first when a request pipelined behind it runs out of time, then closes", async () => {
    const result = validateConfig(configDocument({ bind: "127.0.0.1:0", outbound_url: "http://127.0.0.1:9/r" }));
    if (!result.ok) throw new Error(JSON.stringify(result.problems));
    // The first message's queue holds its 200 until the test lets it go.
    let release: () => void = () => undefined;
    let holding = false;
    const queue = {
      enqueue: () =>
        new Promise<void>((resolve) => {
          holding = true;
          release = resolve;
        }),
    };
    const [listener] = buildListeners(
      result.config.channels,
      { secretsFor: () => [SECRET], queueFor: () => queue, clock: systemClock, newId: randomId, logger: silentLogger },
      SHORT,
    );
    if (listener === undefined) throw new Error("no listener");
    const { server } = listener;
    let timedOut = false;
    server.on("clientError", () => {
      timedOut = true;
    });
    server.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    try {
      const address = server.address();
      const pipelined = await client(typeof address === "object" && address !== null ? address.port : 0);
      const body = JSON.stringify({ sender_id: "a", text: "first" });
      const head = (length: number) =>
        `POST /webhook HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${SECRET}\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`;
      pipelined.socket.write(`${head(body.length)}${body}${head(50)}{"sender`);
      await waitFor(() => (holding ? true : undefined), 2_000, "the first message queued");
      await waitFor(() => (timedOut ? true : undefined), SHORT.requestTimeoutMs * 3, "the second request's time limit");
      release();
      await pipelined.closed;
      expect(pipelined.received()).toMatch(/^HTTP\/1\.1 200 /);
      expect(pipelined.received()).not.toContain(" 408 ");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
