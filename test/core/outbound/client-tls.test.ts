import { describe, expect, it } from "vitest";
import type { ChannelConfig } from "../../../src/core/config/config-schema.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { readClientTls } from "../../../src/core/outbound/client-tls.js";
import { configDocument } from "../../support/configs.js";

function channelWith(tls: Record<string, unknown>): ChannelConfig {
  const result = validateConfig(configDocument({ outbound_url: "https://receiver.example/r", tls }));
  if (!result.ok || result.config.channels[0] === undefined) throw new Error("invalid test configuration");
  return result.config.channels[0];
}

const TLS = { client_cert_env: "CERT", client_key_env: "KEY", ca_env: "CA" };

describe("readClientTls", () => {
  it("reads the PEM variables, and the binding, of webhook.tls", () => {
    const values: Record<string, string> = { CERT: "cert pem", KEY: "key pem", CA: "ca pem" };
    expect(readClientTls(channelWith({ ...TLS, mtls_binding: "MTLS" }), (name) => values[name])).toEqual({
      material: { cert: "cert pem", key: "key pem", ca: "ca pem" },
      binding: "MTLS",
    });
    expect(readClientTls(channelWith({ ca_env: "CA" }), (name) => values[name])).toEqual({
      material: { ca: "ca pem" },
      binding: undefined,
    });
  });

  it("needs the variables without a binding, and leaves them to the runtime with one", () => {
    expect(() => readClientTls(channelWith(TLS), () => undefined)).toThrow("environment variable CERT is not set");
    expect(readClientTls(channelWith({ ...TLS, mtls_binding: "MTLS" }), () => undefined)).toEqual({
      material: undefined,
      binding: "MTLS",
    });
  });

  it("is undefined for a channel without tls", () => {
    const result = validateConfig(configDocument());
    expect(result.ok && readClientTls(result.config.channels[0] as ChannelConfig, () => "x")).toBeUndefined();
  });
});
