import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type ClosablePoster, createUndiciPoster, IDLE_POOL_MS } from "../../../src/node/consumer/undici-poster.js";
import { failure } from "../../support/failure.js";
import { freePort } from "../../support/free-port.js";
import { waitFor } from "../../support/wait-for.js";

type Handler = (request: IncomingMessage, body: string, response: ServerResponse) => void;

let server: Server | undefined;
let poster: ClosablePoster | undefined;

afterEach(async () => {
  await poster?.close();
  if (server !== undefined) {
    server.closeAllConnections();
    server.close();
  }
  server = undefined;
  poster = undefined;
});

/** A real receiver on a free loopback port; `handle` sees each request with its whole body. */
async function listen(handle: Handler): Promise<string> {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => handle(request, Buffer.concat(chunks).toString("utf8"), response));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return `http://127.0.0.1:${port}/replies?x=1`;
}

describe("the undici poster", () => {
  it("posts the body and headers to the path and query, and returns the status and Retry-After", async () => {
    const seen: Record<string, string | undefined> = {};
    const url = await listen((request, body, response) => {
      seen.url = request.url;
      seen.body = body;
      seen.type = request.headers["content-type"];
      response.writeHead(429, { "retry-after": "7" }).end("slow down");
    });
    poster = createUndiciPoster();
    const result = await poster.post(url, '{"a":1}', { "content-type": "application/json" }, 5_000);
    expect(result).toEqual({ status: 429, retryAfter: "7" });
    expect(seen).toEqual({ url: "/replies?x=1", body: '{"a":1}', type: "application/json" });
  });

  it("reuses keep-alive connections for posts one after another", async () => {
    let connections = 0;
    const url = await listen((_request, _body, response) => response.end("ok"));
    server?.on("connection", () => {
      connections += 1;
    });
    poster = createUndiciPoster();
    for (let index = 0; index < 20; index += 1) {
      expect((await poster.post(url, "{}", {}, 5_000)).status).toBe(200);
    }
    // undici lets a socket rest one event-loop turn before reusing it, so a post made right
    // after the last answer takes a second connection; the two then take turns.
    expect(connections).toBeLessThanOrEqual(2);
  });

  it("rejects a post still waiting for a free connection after timeout_ms, and never sends it", async () => {
    let held: ServerResponse | undefined;
    const bodies: string[] = [];
    const url = await listen((_request, body, response) => {
      bodies.push(body);
      // The first post keeps the only connection busy; any other is answered at once.
      if (body === "first") held = response;
      else response.end("ok");
    });
    poster = createUndiciPoster({ connections: 1 });
    const first = poster.post(url, "first", {}, 10_000);
    await waitFor(() => (bodies.length === 1 ? true : undefined));
    const error = await failure(poster.post(url, "second", {}, 50));
    expect(error.code).toBe("delivery_failed");
    expect(error.retryable).toBe(true);
    expect(error.timedOut).toBe(true);
    // Free the connection: the timed-out post must not go out on it afterwards.
    held?.end("ok");
    expect((await first).status).toBe(200);
    expect((await poster.post(url, "third", {}, 5_000)).status).toBe(200);
    expect(bodies).toEqual(["first", "third"]);
  });

  it("rejects with a retryable delivery_failed when nothing listens", async () => {
    poster = createUndiciPoster();
    const error = await failure(poster.post(`http://127.0.0.1:${await freePort()}/`, "{}", {}, 5_000));
    expect(error.code).toBe("delivery_failed");
    expect(error.retryable).toBe(true);
    expect(error.timedOut).toBe(false);
    expect(error.message).toMatch(/ECONNREFUSED/);
  });
});

describe("the undici poster's pools over reloads", () => {
  /** A receiver of its own (the file's `server` is another origin), answered by `handle`. */
  async function origin(handle: Handler, opened: Server[]): Promise<string> {
    const other = createServer((request, response) => {
      request.resume();
      request.on("end", () => handle(request, "", response));
    });
    opened.push(other);
    other.listen(0, "127.0.0.1");
    await once(other, "listening");
    return `http://127.0.0.1:${(other.address() as AddressInfo).port}/replies`;
  }

  it("closes a pool unused for a while when a new one opens, never one with a post in flight, and opens it again when needed", async () => {
    const opened: Server[] = [];
    let clock = 1_000_000;
    let answerHeld: (() => void) | undefined;
    try {
      const ok: Handler = (_request, _body, response) => response.end("ok");
      const [first, second, third] = [await origin(ok, opened), await origin(ok, opened), await origin(ok, opened)];
      const slow = await origin((_request, _body, response) => {
        answerHeld = () => response.end("late");
      }, opened);
      poster = createUndiciPoster({ now: () => clock });
      const post = (url: string) => poster?.post(url, "{}", {}, 30_000);

      expect(await post(first)).toMatchObject({ status: 200 });
      const inFlight = post(slow);
      await waitFor(() => answerHeld, 5_000, "the slow receiver's request");
      expect(poster.openPools()).toBe(2);

      // A reload moved outbound_url: the first origin's pool is left unused.
      clock += IDLE_POOL_MS - 1;
      expect(await post(second)).toMatchObject({ status: 200 });
      expect(poster.openPools()).toBe(3);
      clock += 1;
      expect(await post(third)).toMatchObject({ status: 200 });
      // The first closed; the slow one, as old, still waits for its answer and stays.
      expect(poster.openPools()).toBe(3);
      answerHeld?.();
      expect(await inFlight).toMatchObject({ status: 200 });

      // Moved back: a pool opens again for the first origin, and posts; the slow one, done, closes.
      expect(await post(first)).toMatchObject({ status: 200 });
      expect(poster.openPools()).toBe(3);
    } finally {
      answerHeld?.();
      for (const other of opened) {
        other.closeAllConnections();
        other.close();
      }
    }
  });
});
