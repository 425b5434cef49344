// `npm run test:proxies`: the documented proxy recipes, run for real (proxy-stack.ts starts
// deploy/nginx.conf and deploy/Caddyfile as they are, only the machine-specific parts swapped).
// This file checks their body limit, the service's own: a body of exactly 1 MiB passes, and
// 1 MiB + 1 byte is refused with 413, with and without Content-Length. Needs nginx, caddy and
// openssl: npm run test:proxies checks for them first, and npm run test:tools installs them
// (scripts/test-tools.mjs).
import { describe, expect, it } from "vitest";
import { MIB, messageOfSize } from "./https-client.js";
import { useProxyStack } from "./proxy-stack.js";

const stack = useProxyStack();

describe.each(["nginx", "caddy"])("%s with the documented recipe, over HTTPS", (name) => {
  it.each([false, true])("accepts a body of exactly 1 MiB (chunked: %s)", async (chunked) => {
    const answer = await stack.postMessage(name, messageOfSize(MIB, `${name}-mib`), { chunked });
    expect(answer.status, answer.body).toBe(200);
  });

  it("refuses 1 MiB + 1 byte announced in Content-Length with 413 before the body is sent", async () => {
    // The refusal comes from the header alone. A client that sends the whole body anyway races the
    // proxy's close: the reset can reach it before the 413 it was already sent (TLS drops what is
    // unread), so this client waits for an early answer as curl does with Expect.
    const answer = await stack.postMessage(name, messageOfSize(MIB + 1, `${name}-over`), {
      bodyAfterMs: 5_000,
    });
    expect(answer.status).toBe(413);
  });

  it("refuses 1 MiB + 1 byte sent chunked with 413", async () => {
    const answer = await stack.postMessage(name, messageOfSize(MIB + 1, `${name}-over-chunked`), {
      chunked: true,
    });
    expect(answer.status).toBe(413);
  });
});
