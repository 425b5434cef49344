import type { ConfigProblem } from "../config-problem.js";
import type { Config } from "../config-schema.js";

/**
 * True for the JSON path of a `webhook.tls` variable (`client_cert_env`, `client_key_env`,
 * `ca_env`): only Node reads them; the Worker presents a client certificate through its
 * `mtls_binding` instead, so a check of what the Worker sees does not ask for them.
 */
export function isNodeTlsVariable(path: string): boolean {
  return /^channels\[\d+\]\.webhook\.tls\./.test(path);
}

/**
 * A channel with `webhook.tls` but no `mtls_binding`, which the Worker refuses: its fetch
 * presents a client certificate only through an `[[mtls_certificates]]` binding and trusts the
 * public CAs only. Read from the configuration alone, so `config check` can say it too.
 */
export function unboundTlsProblems(config: Config): ConfigProblem[] {
  return config.channels.flatMap((channel, index) => {
    const tls = channel.webhook.tls;
    if (tls === undefined || tls.mtls_binding !== undefined) return [];
    return [
      {
        path: `channels[${index}].webhook.tls`,
        message:
          "on Workers, fetch presents a client certificate only through an mTLS certificate binding, and trusts the public CAs only (client_cert_env, client_key_env and ca_env are Node's)",
        fix: 'upload the certificate and key with wrangler mtls-certificate upload, add [[mtls_certificates]] binding = "RECEIVER_MTLS" certificate_id = "<its id>" to wrangler.toml, and set "mtls_binding": "RECEIVER_MTLS"',
      },
    ];
  });
}
