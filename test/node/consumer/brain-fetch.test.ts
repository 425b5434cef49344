/**
 * A brain call's `timeout_ms` (up to ten minutes) is the only limit of Node's fetch for brains:
 * its dispatcher ends nothing at five minutes. On fake timers, which the package's dispatcher
 * reads (Node's own fetch keeps its clock where they do not reach).
 */
import { once } from "node:events";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, expect, it, vi } from "vitest";
import { type BrainFetch, createBrainFetch } from "../../../src/node/consumer/brain-fetch.js";

let server: Server | undefined;
let brainFetch: BrainFetch | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await brainFetch?.close();
  server?.closeAllConnections();
  server?.close();
});

it("waits longer than five minutes for a brain's answer, and reads a body that pauses as long", async () => {
  let waiting: ServerResponse | undefined;
  server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      waiting = response;
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  brainFetch = createBrainFetch();
  const sixMinutes = async () => {
    for (let slice = 0; slice < 720; slice += 1) {
      vi.advanceTimersByTime(500);
      await new Promise((resolve) => setImmediate(resolve));
    }
  };
  const answered = brainFetch.fetch(url, { method: "POST", body: "{}" });
  let failed: unknown;
  answered.catch((error: unknown) => {
    failed = error;
  });
  await vi.waitFor(() => expect(waiting).toBeDefined());
  await sixMinutes();
  expect(failed).toBeUndefined();
  waiting?.writeHead(200, { "content-type": "application/json" });
  waiting?.write('{"answer":');
  const response = await answered;
  const text = response.text();
  await sixMinutes();
  waiting?.end('"late"}');
  expect(JSON.parse(await text)).toEqual({ answer: "late" });
});

it("closes twice without complaint: a stop and its owner's close both close it", async () => {
  const once = createBrainFetch();
  await once.close();
  await expect(once.close()).resolves.toBeUndefined();
});
