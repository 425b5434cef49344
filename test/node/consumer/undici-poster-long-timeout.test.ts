/**
 * An attempt given a `timeout_ms` longer than undici's own five minutes waits for its answer:
 * the attempt's timer is the only limit. A file of its own: undici's clock starts on the timers
 * of the first request in the process, and this one runs on fake timers.
 */
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it, vi } from "vitest";
import { type ClosablePoster, createUndiciPoster } from "../../../src/node/consumer/undici-poster.js";

let server: Server | undefined;
let poster: ClosablePoster | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await poster?.close();
  server?.closeAllConnections();
  server?.close();
});

it("waits a timeout_ms longer than five minutes for the answer", async () => {
  let waiting: ServerResponse | undefined;
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      waiting = response;
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/replies`;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  poster = createUndiciPoster();
  const posted = poster.post(url, "{}", {}, 600_000);
  let failed: unknown;
  posted.catch((error: unknown) => {
    failed = error;
  });
  await vi.waitFor(() => expect(waiting).toBeDefined());
  // Six minutes in slices, each with the sockets read in between, as time would pass.
  for (let slice = 0; slice < 720; slice += 1) {
    vi.advanceTimersByTime(500);
    await new Promise((resolve) => setImmediate(resolve));
  }
  expect(failed).toBeUndefined();
  waiting?.writeHead(204).end();
  expect((await posted).status).toBe(204);
});
