/**
 * The attempt's `timeout_ms` is the limit of a POST to `outbound_url`, its answer's body included:
 * a 2xx whose body is still coming loses its connection at that time (held, it would keep one of
 * the pool's connections until the receiver ends it). A real receiver on loopback.
 */
import { once } from "node:events";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it } from "vitest";
import { type ClosablePoster, createUndiciPoster } from "../../../src/node/consumer/undici-poster.js";

let server: Server | undefined;
let poster: ClosablePoster | undefined;

afterEach(async () => {
  await poster?.close();
  server?.closeAllConnections();
  server?.close();
  server = undefined;
  poster = undefined;
});

async function listen(handle: (request: IncomingMessage, response: ServerResponse, index: number) => void) {
  let requests = 0;
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => handle(request, response, requests++));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/replies`;
}

it("closes the connection of a 2xx whose body never ends at timeout_ms: the next post is not left waiting", async () => {
  const url = await listen((_request, response, index) => {
    if (index > 0) {
      response.writeHead(200).end();
      return;
    }
    response.writeHead(200, { "content-length": "10" });
    response.write("x");
  });
  poster = createUndiciPoster({ connections: 1 });
  expect((await poster.post(url, "{}", {}, 300)).status).toBe(200);
  expect((await poster.post(url, "{}", {}, 5_000)).status).toBe(200);
});
