/**
 * Rotating the inbound secret on Workers: `token_env` may hold two secrets separated by one
 * space, both accepted; anything else leaves the Worker misconfigured (500 config_invalid),
 * and its log names the variable, never the value.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/workers/index.js";
import { captureLogs } from "./support/fake-receiver.js";
import { testEnv } from "./support/test-env.js";

const CONFIG = {
  channels: [{ type: "webhook", token_env: "ROTATED_SECRET", webhook: { outbound_url: "https://receiver.example/r" } }],
  routes: [{ channel: "webhook", brain: "echo" }],
};
const NEW = "rotation-new-4f9c2a";
const OLD = "rotation-old-7d1e0b";

afterEach(() => {
  vi.restoreAllMocks();
});

const post = (secret: string) =>
  new Request("https://channel.example/webhook", {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: "alice", text: "hello" }),
  });

describe("rotating the inbound secret on Workers", () => {
  it("accepts both secrets of a rotation and nothing else", async () => {
    captureLogs();
    const env = testEnv(CONFIG, { ROTATED_SECRET: `${NEW} ${OLD}` });
    expect((await worker.fetch(post(NEW), env)).status).toBe(200);
    expect((await worker.fetch(post(OLD), env)).status).toBe(200);
    expect((await worker.fetch(post("rotation-third-000000"), env)).status).toBe(401);
  });

  it("refuses three secrets as a configuration error naming the variable, never the value", async () => {
    const { lines } = captureLogs();
    const env = testEnv(CONFIG, { ROTATED_SECRET: `${NEW} ${OLD} rotation-third-000000` });
    const response = await worker.fetch(post(NEW), env);
    expect(response.status).toBe(500);
    expect(await response.json()).toMatchObject({ code: "config_invalid" });
    const logged = JSON.stringify(lines);
    expect(logged).toContain("ROTATED_SECRET holds 3 space-separated parts");
    expect(logged).not.toContain(NEW);
  });
});
