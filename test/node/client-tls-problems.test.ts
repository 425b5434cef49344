import { createPrivateKey } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { ChannelError } from "../../src/core/channel-error.js";
import type { Config } from "../../src/core/config/config-schema.js";
import { validateConfig } from "../../src/core/config/validate-config.js";
import { clientTlsProblems, workersOnlyTls } from "../../src/node/client-tls-problems.js";
import { configDocument } from "../support/configs.js";
import { makeTestPki, type TestPki } from "../support/test-pki.js";

const TLS = { client_cert_env: "CERT", client_key_env: "KEY", ca_env: "CA" };
const DAY = 86_400_000;
let pki: TestPki;

beforeAll(() => {
  pki = makeTestPki();
});

function configWith(tls: Record<string, unknown>): Config {
  const result = validateConfig(configDocument({ outbound_url: "https://receiver.example/r", tls }));
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  return result.config;
}

const lookup = (values: Record<string, string>) => (name: string) => values[name];
const good = () => ({ CERT: pki.clientCert, KEY: pki.clientKey, CA: pki.caCert });

describe("clientTlsProblems", () => {
  it("finds nothing wrong with a certificate, its key and the CA", () => {
    expect(clientTlsProblems(configWith(TLS), lookup(good()))).toEqual([]);
  });

  it("names a key that is not the certificate's, with how to compare them", () => {
    const problems = clientTlsProblems(configWith(TLS), lookup({ ...good(), KEY: pki.strangerKey }));
    expect(problems).toEqual([
      {
        path: "channels[0].webhook.tls.client_key_env",
        message: "KEY is not the private key of the certificate in CERT",
        fix: expect.stringContaining("openssl pkey -pubout"),
      },
    ]);
  });

  it("refuses an encrypted key with the command that decrypts it", () => {
    const encrypted = createPrivateKey(pki.clientKey).export({
      format: "pem",
      type: "pkcs8",
      cipher: "aes-256-cbc",
      passphrase: "not-typed-at-start",
    });
    const [problem] = clientTlsProblems(configWith(TLS), lookup({ ...good(), KEY: String(encrypted) }));
    expect(problem).toMatchObject({
      message: expect.stringContaining("encrypted"),
      fix: expect.stringContaining("openssl pkey"),
    });
  });

  it("says which variable holds something else than PEM of its kind", () => {
    const problems = clientTlsProblems(
      configWith(TLS),
      lookup({ CERT: pki.clientKey, KEY: pki.clientCert, CA: "not pem" }),
    );
    expect(problems.map((problem) => problem.path)).toEqual([
      "channels[0].webhook.tls.client_cert_env",
      "channels[0].webhook.tls.client_key_env",
      "channels[0].webhook.tls.ca_env",
    ]);
    expect(JSON.stringify(problems)).not.toContain(pki.clientKey.split("\n")[1]);
  });

  it("reports a certificate that has expired, or is not valid yet, at the time given", () => {
    const later = clientTlsProblems(configWith(TLS), lookup(good()), Date.now() + 10 * DAY);
    expect(later[0]?.message).toMatch(/^the certificate in CERT expired on /);
    const earlier = clientTlsProblems(configWith(TLS), lookup(good()), Date.now() - 10 * DAY);
    expect(earlier[0]?.message).toMatch(/^the certificate in CERT is not valid before /);
  });

  it("reports an unset variable with its fix, and an unreadable file with what the lookup said", () => {
    const unreadable = (name: string) => {
      if (name === "CA")
        throw new ChannelError("config_invalid", "cannot read CA from the file /x named by CA_FILE: no such file");
      return good()[name as "CERT" | "KEY"];
    };
    expect(clientTlsProblems(configWith(TLS), unreadable)).toEqual([
      expect.objectContaining({ path: "channels[0].webhook.tls.ca_env", message: expect.stringContaining("CA_FILE") }),
    ]);
    const [unset] = clientTlsProblems(configWith(TLS), lookup({ CERT: pki.clientCert, CA: pki.caCert }));
    expect(unset).toMatchObject({
      message: "environment variable KEY is not set",
      fix: expect.stringContaining("KEY_FILE"),
    });
  });
});

describe("workersOnlyTls", () => {
  it("names a channel whose tls only has the Workers binding", () => {
    expect(workersOnlyTls(configWith({ mtls_binding: "RECEIVER_MTLS" }))).toEqual([
      expect.objectContaining({
        path: "channels[0].webhook.tls",
        message: expect.stringContaining("applies on Workers"),
      }),
    ]);
    expect(workersOnlyTls(configWith({ ...TLS, mtls_binding: "RECEIVER_MTLS" }))).toEqual([]);
  });
});
