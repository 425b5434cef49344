import { createPrivateKey, type KeyObject, X509Certificate } from "node:crypto";
import { errorMessage } from "../core/channel-error.js";
import type { ConfigProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { fixForUnset } from "../core/config/preflight/preflight.js";

/** Reads a variable as the service does (`<NAME>_FILE` too); may throw for an unreadable file. */
type Lookup = (name: string) => string | undefined;

const PEM_BLOCK = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g;

/**
 * Channels whose `webhook.tls` has nothing Node can use: only `mtls_binding`, the Workers way.
 * `config check` warns (the file may be meant for a Worker); the Node service refuses it.
 */
export function workersOnlyTls(config: Config): ConfigProblem[] {
  return config.channels.flatMap((channel, index) => {
    const tls = channel.webhook.tls;
    if (tls === undefined || tls.client_cert_env !== undefined || tls.ca_env !== undefined) return [];
    return [
      {
        path: `channels[${index}].webhook.tls`,
        message:
          "has only mtls_binding, which applies on Workers: this file is fine for a Worker, but on Node every reply POST would go without the client certificate",
        fix: 'on Node, name the PEM variables: "client_cert_env" and "client_key_env" (and "ca_env" for a private CA), or <NAME>_FILE for files',
      },
    ];
  });
}

/**
 * What stands between each channel's `webhook.tls` and a handshake on Node, checked with the
 * TLS library itself: each variable set and readable, PEM of the right kind (certificates,
 * an unencrypted private key), the key the certificate's own, the certificate valid at `now`.
 * Problems name the variable and the path, never what it holds.
 */
export function clientTlsProblems(config: Config, env: Lookup, now: number = Date.now()): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  for (const [index, channel] of config.channels.entries()) {
    const tls = channel.webhook.tls;
    if (tls === undefined) continue;
    const at = `channels[${index}].webhook.tls`;
    const report = (key: string, message: string, fix: string) => problems.push({ path: `${at}.${key}`, message, fix });
    const read = (key: "client_cert_env" | "client_key_env" | "ca_env"): string | undefined => {
      const variable = tls[key];
      if (variable === undefined) return undefined;
      let value: string | undefined;
      try {
        value = env(variable);
      } catch (error) {
        report(key, errorMessage(error), `make the file readable by the service, or set ${variable} itself`);
        return undefined;
      }
      if (value === undefined || value === "") {
        report(key, `environment variable ${variable} is not set`, fixForUnset(`${at}.${key}`, variable));
        return undefined;
      }
      return value;
    };
    const cert = read("client_cert_env");
    const key = read("client_key_env");
    const ca = read("ca_env");
    const certificates = cert === undefined ? undefined : parseCertificates(cert);
    if (cert !== undefined && certificates === undefined) {
      report(
        "client_cert_env",
        `${tls.client_cert_env} does not hold a PEM certificate (-----BEGIN CERTIFICATE-----)`,
        "give the client certificate in PEM form, its intermediates after it (openssl x509 -in cert.der -inform der -out cert.pem converts DER)",
      );
    }
    const privateKey =
      key === undefined
        ? undefined
        : parseKey(key, tls.client_key_env ?? "", (message, fix) => report("client_key_env", message, fix));
    const leaf = certificates?.[0];
    if (leaf !== undefined && privateKey !== undefined && !leaf.checkPrivateKey(privateKey)) {
      report(
        "client_key_env",
        `${tls.client_key_env} is not the private key of the certificate in ${tls.client_cert_env}`,
        "give the key the certificate was issued for: openssl x509 -noout -pubkey -in cert.pem and openssl pkey -pubout -in key.pem print the same public key",
      );
    }
    if (leaf !== undefined) {
      const from = Date.parse(leaf.validFrom);
      const to = Date.parse(leaf.validTo);
      if (to < now)
        report(
          "client_cert_env",
          `the certificate in ${tls.client_cert_env} expired on ${leaf.validTo}`,
          "renew it, and reload the service (SIGHUP) with the new file",
        );
      else if (from > now)
        report(
          "client_cert_env",
          `the certificate in ${tls.client_cert_env} is not valid before ${leaf.validFrom}`,
          "check the machine's clock, or the certificate's dates",
        );
    }
    if (ca !== undefined && parseCertificates(ca) === undefined) {
      report(
        "ca_env",
        `${tls.ca_env} does not hold PEM CA certificates (-----BEGIN CERTIFICATE-----)`,
        "give the CA certificate(s) the receiver's certificate chains to, in PEM form",
      );
    }
  }
  return problems;
}

/** Every certificate of a PEM text, or undefined when there is none or one does not parse. */
function parseCertificates(pem: string): X509Certificate[] | undefined {
  const blocks = [...pem.matchAll(PEM_BLOCK)].filter((match) => match[1] === "CERTIFICATE").map((match) => match[0]);
  if (blocks.length === 0) return undefined;
  try {
    return blocks.map((block) => new X509Certificate(block));
  } catch {
    return undefined;
  }
}

function parseKey(
  pem: string,
  variable: string,
  report: (message: string, fix: string) => void,
): KeyObject | undefined {
  if (/ENCRYPTED/.test(pem)) {
    report(
      `${variable} holds an encrypted private key, whose passphrase the service cannot type`,
      "decrypt it into a file only the service can read: openssl pkey -in key.pem -out key-plain.pem",
    );
    return undefined;
  }
  if (![...pem.matchAll(PEM_BLOCK)].some((match) => match[1]?.endsWith("PRIVATE KEY"))) {
    report(
      `${variable} does not hold a PEM private key (-----BEGIN PRIVATE KEY-----)`,
      "give the certificate's private key in PEM form (openssl pkey -in key.der -inform der -out key.pem converts DER)",
    );
    return undefined;
  }
  try {
    return createPrivateKey(pem);
  } catch (error) {
    report(
      `${variable} holds a private key that cannot be read (${errorMessage(error)})`,
      "give the certificate's private key in PEM form",
    );
    return undefined;
  }
}
