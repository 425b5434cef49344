/**
 * Mutual TLS on Node, against a real HTTPS receiver on port 0 that requires a client
 * certificate from its CA (made by openssl for this file): the poster is refused without one
 * and delivers with one, and keeps connections that presented a certificate apart from others.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientTls } from "../../../src/core/outbound/client-tls.js";
import { type ClosablePoster, createUndiciPoster } from "../../../src/node/consumer/undici-poster.js";
import { failure } from "../../support/failure.js";
import { CLIENT_CN, makeTestPki, type TestPki } from "../../support/test-pki.js";
import { startTlsReceiver, type TlsReceiver } from "../../support/tls-receiver.js";

let pki: TestPki;
let receiver: TlsReceiver;
let poster: ClosablePoster;

beforeAll(async () => {
  pki = makeTestPki();
  receiver = await startTlsReceiver(pki);
  poster = createUndiciPoster();
});

afterAll(async () => {
  await poster?.close();
  await receiver?.close();
});

const HEADERS = { "content-type": "application/json" };
const post = (tls?: ClientTls) => poster.post(receiver.url, '{"text":"hi"}', HEADERS, 5_000, tls);

describe("the undici poster with webhook.tls", () => {
  it("is refused by a receiver that requires a client certificate when it presents none", async () => {
    const withCa: ClientTls = { material: { ca: pki.caCert }, binding: undefined };
    const error = await failure(post(withCa));
    expect(error).toMatchObject({ code: "delivery_failed", retryable: true });
    expect(receiver.deliveries).toHaveLength(0);
    expect(receiver.refused.join("\n")).toMatch(/certificate/i);
  });

  it("delivers with the client certificate, which the receiver sees", async () => {
    const tls: ClientTls = {
      material: { cert: pki.clientCert, key: pki.clientKey, ca: pki.caCert },
      binding: undefined,
    };
    expect(await post(tls)).toEqual({ status: 200, retryAfter: null });
    expect(receiver.deliveries.at(-1)).toMatchObject({ clientCn: CLIENT_CN, body: '{"text":"hi"}' });
  });

  it("does not reuse a connection that presented a certificate for a channel that has none", async () => {
    const before = receiver.deliveries.length;
    await failure(post({ material: { ca: pki.caCert }, binding: undefined }));
    expect(receiver.deliveries).toHaveLength(before);
  });

  it("trusts the receiver only through ca: without it the public CAs do not know the receiver's", async () => {
    const tls: ClientTls = { material: { cert: pki.clientCert, key: pki.clientKey }, binding: undefined };
    const error = await failure(post(tls));
    expect(error.message).toMatch(/certificate/i);
  });

  it("fails, without retrying, a channel whose tls only names a Workers binding", async () => {
    const error = await failure(post({ material: undefined, binding: "RECEIVER_MTLS" }));
    expect(error).toMatchObject({ code: "delivery_failed", retryable: false });
    expect(error.message).toContain("not mtls_binding");
  });

  it("is refused with a certificate from a CA the receiver does not trust", async () => {
    const tls: ClientTls = {
      material: { cert: pki.strangerCert, key: pki.strangerKey, ca: pki.caCert },
      binding: undefined,
    };
    const refusedBefore = receiver.refused.length;
    await failure(post(tls));
    expect(receiver.refused.length).toBeGreaterThan(refusedBefore);
  });
});
