// A request refused on its head (a wrong secret) has its body, within the limit, read and dropped
// before the answer closes the connection (so that a TLS proxy in front gets the answer and not a
// reset: test/proxies/proxies-refusals.test.ts). A client that never sends that body is not
// waited for past DROP_BODY_MS: without the secret it holds a connection no longer than that.
import { afterEach, describe, expect, it } from "vitest";
import { DROP_BODY_MS } from "../../../src/node/listener/read-node-body.js";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { openRawClient, rawPost, statusLines } from "../../support/raw-client.js";

let harness: ServiceHarness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("a request refused on its head", () => {
  it("is answered once its body arrived, and the connection then closes", async () => {
    harness = await startHarness();
    const raw = await openRawClient(Number(new URL(harness.baseUrl).port));
    const body = JSON.stringify({ sender_id: "u1", text: "x".repeat(200_000) });
    const request = rawPost(body, { authorization: "Bearer wrong-guess" });
    const cut = request.length - 1_000;
    raw.socket.write(request.slice(0, cut));
    // Nothing is answered while the body is still on its way.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(raw.received()).toBe("");
    raw.socket.write(request.slice(cut));
    await raw.closed;
    expect(statusLines(raw.received())).toEqual(["HTTP/1.1 401 "]);
  });

  it("whose body never comes is answered and closed after DROP_BODY_MS, not at the request timeout", async () => {
    harness = await startHarness();
    const raw = await openRawClient(Number(new URL(harness.baseUrl).port));
    raw.socket.write(rawPost("", { authorization: "Bearer wrong-guess", "content-length": "5000" }));
    const lived = (await raw.closed) - raw.connectedAt;
    expect(statusLines(raw.received())).toEqual(["HTTP/1.1 401 "]);
    expect(lived).toBeGreaterThanOrEqual(DROP_BODY_MS - 100);
    expect(lived).toBeLessThan(DROP_BODY_MS + 2_000);
  });
});
