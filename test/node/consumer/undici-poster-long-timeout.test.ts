/**
 * An attempt given a `timeout_ms` longer than undici's own five minutes waits for its answer:
 * the attempt's timer is the only limit. A file of its own: undici's clock starts on the timers
 * of the first request in the process, and this one runs on fake timers.
 */
import { afterEach, expect, it, vi } from "vitest";
import { type ClosablePoster, createUndiciPoster } from "../../../src/node/consumer/undici-poster.js";
import { type HoldingServer, passFakeTime, startHoldingServer } from "./holding-server.js";

let server: HoldingServer | undefined;
let poster: ClosablePoster | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await poster?.close();
  server?.close();
});

it("waits a timeout_ms longer than five minutes for the answer", async () => {
  server = await startHoldingServer("/replies");
  const receiver = server;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  poster = createUndiciPoster();
  const posted = poster.post(receiver.url, "{}", {}, 600_000);
  let failed: unknown;
  posted.catch((error: unknown) => {
    failed = error;
  });
  await vi.waitFor(() => expect(receiver.held()).toBeDefined());
  await passFakeTime(6 * 60_000);
  expect(failed).toBeUndefined();
  receiver.held()?.writeHead(204).end();
  expect((await posted).status).toBe(204);
});
