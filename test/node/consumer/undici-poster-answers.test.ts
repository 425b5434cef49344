/**
 * What counts as the receiver's answer: its status, as soon as it is sent. A 2xx whose body is
 * slow, never finished, cut off or huge was received (the receiver has the reply), as fetch on
 * Workers says; counting it as no answer posted the reply again and again and opened the
 * receiver's circuit against a receiver that answered 200 every time. Real receivers on loopback.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type ClosablePoster, createUndiciPoster } from "../../../src/node/consumer/undici-poster.js";
import { failure } from "../../support/failure.js";

let server: Server | undefined;
let poster: ClosablePoster | undefined;

afterEach(async () => {
  await poster?.close();
  server?.closeAllConnections();
  server?.close();
  server = undefined;
  poster = undefined;
});

async function listen(handle: (request: IncomingMessage, response: ServerResponse) => void): Promise<string> {
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => handle(request, response));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/replies`;
}

describe("the undici poster's answer", () => {
  it("is a 200 whose body never finishes", async () => {
    const url = await listen((_request, response) => {
      response.writeHead(200, { "content-length": "10" });
      response.write("x");
    });
    poster = createUndiciPoster();
    expect(await poster.post(url, "{}", {}, 500)).toEqual({ status: 200, retryAfter: null });
  });

  it("is a 200 whose connection is cut in the middle of its body", async () => {
    const url = await listen((request, response) => {
      response.writeHead(200, { "content-length": "100" });
      response.write("partial", () => request.socket.destroy());
    });
    poster = createUndiciPoster();
    expect((await poster.post(url, "{}", {}, 2_000)).status).toBe(200);
  });

  it("is a 200 with a body far larger than it reads, and the next post gets a connection", async () => {
    const chunk = Buffer.alloc(1024 * 1024, 120);
    const url = await listen((_request, response) => {
      response.writeHead(200);
      const pump = (left: number): void => {
        if (left === 0 || response.destroyed) {
          response.end();
          return;
        }
        if (response.write(chunk)) pump(left - 1);
        else response.once("drain", () => pump(left - 1));
      };
      pump(50);
    });
    poster = createUndiciPoster();
    expect((await poster.post(url, "{}", {}, 5_000)).status).toBe(200);
    expect((await poster.post(url, "{}", {}, 5_000)).status).toBe(200);
  });

  it("is the final status after an interim 103, not the 103", async () => {
    const url = await listen((_request, response) => {
      response.writeEarlyHints({ link: "</a.css>; rel=preload" });
      response.writeHead(202).end();
    });
    poster = createUndiciPoster();
    expect((await poster.post(url, "{}", {}, 2_000)).status).toBe(202);
  });

  it("is a 200 whose body never ends, whose connection goes at timeout_ms: the next post is not left waiting", async () => {
    let requests = 0;
    const url = await listen((_request, response) => {
      requests += 1;
      if (requests > 1) {
        response.writeHead(200).end();
        return;
      }
      response.writeHead(200, { "content-length": "10" });
      response.write("x");
    });
    // One connection: held by the first answer, the second post would wait for it.
    poster = createUndiciPoster({ connections: 1 });
    expect((await poster.post(url, "{}", {}, 300)).status).toBe(200);
    expect((await poster.post(url, "{}", {}, 5_000)).status).toBe(200);
  });

  it("is still no answer when no status came within the time limit", async () => {
    const url = await listen(() => undefined);
    poster = createUndiciPoster();
    const error = await failure(poster.post(url, "{}", {}, 200));
    expect(error.message).toContain("no answer within 200 ms");
  });
});
