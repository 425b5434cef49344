import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { requireTool } from "./test-tools.js";

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made by openssl for one test file. */
export interface TestPki {
  readonly dir: string;
  readonly caCert: string;
  readonly serverCert: string;
  readonly serverKey: string;
  readonly clientCert: string;
  readonly clientKey: string;
  /** Paths of the files above, for `<NAME>_FILE` variables. */
  readonly files: { readonly caCert: string; readonly clientCert: string; readonly clientKey: string };
  /** A certificate and key of another CA: one that the receiver does not trust. */
  readonly strangerCert: string;
  readonly strangerKey: string;
}

/** The subject CN of the client certificate {@link makeTestPki} makes. */
export const CLIENT_CN = "webhook-channel-client";

function openssl(dir: string, args: readonly string[]): void {
  execFileSync(requireTool("openssl", "test"), args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] });
}

/** A P-256 key and a certificate signed by `ca` (or self-signed as a CA when `ca` is undefined). */
function issue(dir: string, name: string, subject: string, ca: string | undefined, extensions: string): void {
  writeFileSync(join(dir, `${name}.ext`), `${extensions}\n`);
  openssl(dir, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", `${name}.key`]);
  if (ca === undefined) {
    openssl(dir, [
      "req",
      "-x509",
      "-new",
      "-key",
      `${name}.key`,
      "-subj",
      subject,
      "-days",
      "2",
      "-out",
      `${name}.crt`,
      "-addext",
      extensions,
    ]);
    return;
  }
  openssl(dir, ["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`]);
  openssl(dir, [
    "x509",
    "-req",
    "-in",
    `${name}.csr`,
    "-CA",
    `${ca}.crt`,
    "-CAkey",
    `${ca}.key`,
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    `${name}.ext`,
    "-out",
    `${name}.crt`,
  ]);
}

/** Makes the certificates with openssl in a new temporary folder (a second or so). */
export function makeTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "webhook-channel-pki-"));
  issue(dir, "ca", "/CN=webhook-channel test CA", undefined, "basicConstraints=critical,CA:TRUE");
  issue(dir, "server", "/CN=127.0.0.1", "ca", "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth");
  issue(dir, "client", `/CN=${CLIENT_CN}`, "ca", "extendedKeyUsage=clientAuth");
  issue(dir, "stranger", "/CN=stranger", undefined, "basicConstraints=critical,CA:TRUE");
  const read = (file: string) => readFileSync(join(dir, file), "utf8");
  return {
    dir,
    caCert: read("ca.crt"),
    serverCert: read("server.crt"),
    serverKey: read("server.key"),
    clientCert: read("client.crt"),
    clientKey: read("client.key"),
    files: { caCert: join(dir, "ca.crt"), clientCert: join(dir, "client.crt"), clientKey: join(dir, "client.key") },
    strangerCert: read("stranger.crt"),
    strangerKey: read("stranger.key"),
  };
}
