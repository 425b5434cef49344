import type { ConfigProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import type { WorkerEnv } from "./worker-env.js";

/**
 * What the Worker needs of each channel's `webhook.tls`: fetch presents a client certificate
 * only through an `[[mtls_certificates]]` binding and trusts the public CAs only, so a channel
 * with `tls` needs `mtls_binding`, naming a binding the Worker has. The PEM variables are
 * Node's and are not asked for here.
 */
export function tlsBindingProblems(config: Config, env: WorkerEnv): ConfigProblem[] {
  return config.channels.flatMap((channel, index) => {
    const tls = channel.webhook.tls;
    if (tls === undefined) return [];
    const path = `channels[${index}].webhook.tls`;
    const binding = tls.mtls_binding;
    if (binding === undefined) {
      return [
        {
          path,
          message:
            "on Workers, fetch presents a client certificate only through an mTLS certificate binding, and trusts the public CAs only (client_cert_env, client_key_env and ca_env are Node's)",
          fix: 'upload the certificate and key with wrangler mtls-certificate upload, add [[mtls_certificates]] binding = "RECEIVER_MTLS" certificate_id = "<its id>" to wrangler.toml, and set "mtls_binding": "RECEIVER_MTLS"',
        },
      ];
    }
    const bound = env[binding];
    if (bound !== null && typeof bound === "object" && "fetch" in bound && typeof bound.fetch === "function") return [];
    return [
      {
        path: `${path}.mtls_binding`,
        message: `the Worker has no binding named ${binding}`,
        fix: `add [[mtls_certificates]] binding = "${binding}" certificate_id = "<the id wrangler mtls-certificate upload printed>" to wrangler.toml`,
      },
    ];
  });
}
