import { beforeAll, describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";
import { makeTestPki, type TestPki } from "../support/test-pki.js";

const SECRET = "tls-check-secret-0123456789abcdefghij";
const TLS = { client_cert_env: "CLIENT_CERT", client_key_env: "CLIENT_KEY", ca_env: "RECEIVER_CA" };
let pki: TestPki;

beforeAll(() => {
  pki = makeTestPki();
});

const tlsConfig = (tls: Record<string, unknown>) =>
  writeTempConfig(configDocument({ outbound_url: "https://receiver.example/replies", tls }));

describe("config check and webhook.tls", () => {
  it("--preflight reads the PEM files as the service would and confirms them", async () => {
    const file = await tlsConfig(TLS);
    const run = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      CLIENT_CERT_FILE: pki.files.clientCert,
      CLIENT_KEY_FILE: pki.files.clientKey,
      RECEIVER_CA_FILE: pki.files.caCert,
    });
    expect(run).toMatchObject({ code: 0, out: expect.stringContaining("OK (environment confirmed)") });
  });

  it("--preflight says when the key is not the certificate's, and when a file cannot be read, once each", async () => {
    const file = await tlsConfig(TLS);
    const run = await runCliCaptured(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: SECRET,
      CLIENT_CERT: pki.clientCert,
      CLIENT_KEY: pki.strangerKey,
      RECEIVER_CA_FILE: `${pki.dir}/missing.pem`,
    });
    expect(run.code).toBe(1);
    expect(run.err).toContain(
      "channels[0].webhook.tls.client_key_env: CLIENT_KEY is not the private key of the certificate in CLIENT_CERT",
    );
    expect(run.err.match(/channels\[0\]\.webhook\.tls\.ca_env/g)).toHaveLength(1);
    expect(run.err).toContain("missing.pem");
    expect(run.err).not.toContain("PRIVATE KEY-----");
  });

  it("warns about a tls with only the Workers binding, which Node cannot use, without failing the file", async () => {
    const file = await tlsConfig({ mtls_binding: "RECEIVER_MTLS" });
    const run = await runCliCaptured(["config", "check", file]);
    expect(run.code).toBe(0);
    expect(run.err).toContain("warning channels[0].webhook.tls: has only mtls_binding, which applies on Workers");
  });

  it("refuses tls on an http: outbound_url and a certificate without its key", async () => {
    const file = await writeTempConfig(
      configDocument({ outbound_url: "http://receiver.example/replies", tls: { client_cert_env: "CLIENT_CERT" } }),
    );
    const run = await runCliCaptured(["config", "check", file]);
    expect(run.code).toBe(1);
    expect(run.err).toContain("channels[0].webhook.tls.client_key_env: is required with the other half");
    expect(run.err).toContain("channels[0].webhook.tls: applies to an https: outbound_url");
  });
});
