import type { ConfigProblem } from "../core/config/config-problem.js";
import type { Config } from "../core/config/config-schema.js";
import { unboundTlsProblems } from "../core/config/preflight/workers-tls.js";
import type { WorkerEnv } from "./worker-env.js";

/**
 * What the Worker needs of each channel's `webhook.tls`: fetch presents a client certificate
 * only through an `[[mtls_certificates]]` binding and trusts the public CAs only, so a channel
 * with `tls` needs `mtls_binding`, naming a binding the Worker has. The PEM variables are
 * Node's and are not asked for here.
 */
export function tlsBindingProblems(config: Config, env: WorkerEnv): ConfigProblem[] {
  const bindings = config.channels.flatMap((channel, index) => {
    const binding = channel.webhook.tls?.mtls_binding;
    if (binding === undefined) return [];
    const bound = env[binding];
    if (bound !== null && typeof bound === "object" && "fetch" in bound && typeof bound.fetch === "function") return [];
    return [
      {
        path: `channels[${index}].webhook.tls.mtls_binding`,
        message: `the Worker has no binding named ${binding}`,
        fix: `add [[mtls_certificates]] binding = "${binding}" certificate_id = "<the id wrangler mtls-certificate upload printed>" to wrangler.toml`,
      },
    ];
  });
  return [...unboundTlsProblems(config), ...bindings];
}
