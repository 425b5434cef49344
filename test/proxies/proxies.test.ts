// `npm run test:proxies`: the documented proxy recipes, run for real. deploy/nginx.conf and
// deploy/Caddyfile (shown verbatim in docs/deployment.md) are started as they are, with only the
// machine-specific parts swapped: the listening port, the certificate (self-signed, made here by
// openssl) and the service's port (proxy-stack.ts). This file checks what they forward: a message
// and its reply, the client's address in X-Forwarded-For (recorded by a tap in front of the
// service), /healthz, and nothing else; proxies-body-limit.test.ts checks the 1 MiB body limit.
// Needs nginx, caddy and openssl: npm run test:proxies checks for them first, and
// npm run test:tools installs them (scripts/test-tools.mjs).
import { describe, expect, it } from "vitest";
import { waitFor } from "../support/wait-for.js";
import { useProxyStack } from "./proxy-stack.js";

const stack = useProxyStack();

describe.each(["nginx", "caddy"])("%s with the documented recipe, over HTTPS", (name) => {
  it("accepts a message and the reply reaches the receiver", async () => {
    const answer = await stack.postMessage(name, JSON.stringify({ sender_id: `${name}-user`, text: "hi" }));
    expect(answer.status, answer.body).toBe(200);
    const { message_id } = JSON.parse(answer.body) as { message_id: string };
    const reply = await waitFor(
      () => stack.replies.find((candidate) => (candidate.body as { in_reply_to?: string }).in_reply_to === message_id),
      10_000,
      "the reply at the receiver",
    );
    expect(reply.body).toMatchObject({ recipient_id: `${name}-user`, text: "hi" });
  });

  it("gives the service the client's address in X-Forwarded-For, not the one the client claims", async () => {
    const marker = `${name}-forwarded`;
    const answer = await stack.postMessage(name, JSON.stringify({ sender_id: marker, text: "who am I" }), {
      headers: { "x-forwarded-for": "203.0.113.7", "idempotency-key": marker },
    });
    expect(answer.status, answer.body).toBe(200);
    const seen = stack.tapped.find((request) => request.headers["idempotency-key"] === marker);
    expect(seen?.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen?.headers["x-forwarded-proto"]).toBe("https");
  });

  it("counts failed authentications per client, not for the proxy's address", async () => {
    // Each proxy its own pair of clients: the limit of one must not carry into the other's test.
    const [intruder, client] = name === "nginx" ? ["127.0.0.5", "127.0.0.6"] : ["127.0.0.7", "127.0.0.8"];
    const body = JSON.stringify({ sender_id: `${name}-limit`, text: "hi" });
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 21; attempt += 1) {
      const answer = await stack.postMessage(name, body, {
        headers: { authorization: "Bearer wrong-secret" },
        localAddress: intruder,
      });
      statuses.push(answer.status);
    }
    expect(statuses.at(-1)).toBe(429);
    const answer = await stack.postMessage(name, body, { localAddress: client });
    expect(answer.status, answer.body).toBe(200);
  });

  it("serves /healthz", async () => {
    const answer = await stack.send(name, { path: "/healthz" });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: "ok" });
  });

  it("forwards nothing but the webhook path and /healthz", async () => {
    const answer = await stack.send(name, { path: `/not-forwarded-${name}` });
    expect(answer.status).toBe(404);
    expect(stack.tapped.filter((request) => request.url.startsWith("/not-forwarded"))).toEqual([]);
  });
});
