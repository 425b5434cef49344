/**
 * A brain call's `timeout_ms` (up to ten minutes) is the only limit of Node's fetch for brains:
 * its dispatcher ends nothing at five minutes. On fake timers, which the package's dispatcher
 * reads (Node's own fetch keeps its clock where they do not reach).
 */
import { afterEach, expect, it, vi } from "vitest";
import { type BrainFetch, createBrainFetch } from "../../../src/node/consumer/brain-fetch.js";
import { type HoldingServer, passFakeTime, startHoldingServer } from "./holding-server.js";

let server: HoldingServer | undefined;
let brainFetch: BrainFetch | undefined;

afterEach(async () => {
  vi.useRealTimers();
  await brainFetch?.close();
  server?.close();
});

it("waits longer than five minutes for a brain's answer, and reads a body that pauses as long", async () => {
  server = await startHoldingServer("/v1/chat/completions");
  const brain = server;
  vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
  brainFetch = createBrainFetch();
  const answered = brainFetch.fetch(brain.url, { method: "POST", body: "{}" });
  let failed: unknown;
  answered.catch((error: unknown) => {
    failed = error;
  });
  await vi.waitFor(() => expect(brain.held()).toBeDefined());
  await passFakeTime(6 * 60_000);
  expect(failed).toBeUndefined();
  brain.held()?.writeHead(200, { "content-type": "application/json" });
  brain.held()?.write('{"answer":');
  const response = await answered;
  const text = response.text();
  await passFakeTime(6 * 60_000);
  brain.held()?.end('"late"}');
  expect(JSON.parse(await text)).toEqual({ answer: "late" });
});

it("closes twice without complaint: a stop and its owner's close both close it", async () => {
  const once = createBrainFetch();
  await once.close();
  await expect(once.close()).resolves.toBeUndefined();
});

it("cuts the calls in flight, closing their connections, and makes later calls on new ones", async () => {
  server = await startHoldingServer("/v1/chat/completions");
  const brain = server;
  brainFetch = createBrainFetch();
  const cut = brainFetch.fetch(brain.url, { method: "POST", body: "{}" });
  const held = await vi.waitFor(() => {
    const response = brain.held();
    if (response === undefined) throw new Error("not held yet");
    return response;
  });
  const closed = new Promise<void>((resolve) => held.on("close", () => resolve()));
  brainFetch.cutInFlight();
  await expect(cut).rejects.toThrow();
  await closed;

  const later = brainFetch.fetch(brain.url, { method: "POST", body: "{}" });
  await vi.waitFor(() => expect(brain.held()).not.toBe(held));
  brain.held()?.end("{}");
  expect((await later).status).toBe(200);
});
