import type { ConfigProblem } from "./config-problem.js";
import type { Config } from "./config-schema.js";

/**
 * The rules between `webhook.tls` keys, per channel: a certificate comes with its key, the
 * object says something, and it is for an `https:` receiver (a client certificate or a CA means
 * nothing over plain HTTP, and sending one there would hide a typo in the URL).
 */
export function tlsProblems(config: Config): ConfigProblem[] {
  return config.channels.flatMap((channel, index) => {
    const tls = channel.webhook.tls;
    if (tls === undefined) return [];
    const at = `channels[${index}].webhook.tls`;
    const problems: ConfigProblem[] = [];
    if ((tls.client_cert_env === undefined) !== (tls.client_key_env === undefined)) {
      const missing = tls.client_cert_env === undefined ? "client_cert_env" : "client_key_env";
      problems.push({
        path: `${at}.${missing}`,
        message: "is required with the other half of the client certificate",
        fix: 'name both variables: "client_cert_env" (the certificate, PEM) and "client_key_env" (its key, PEM)',
      });
    }
    if (Object.values(tls).every((value) => value === undefined)) {
      problems.push({
        path: at,
        message: "is empty",
        fix: 'remove "tls", or give client_cert_env and client_key_env (Node), ca_env (Node) or mtls_binding (Workers)',
      });
    }
    if (!channel.webhook.outbound_url.startsWith("https:")) {
      problems.push({
        path: at,
        message: `applies to an https: outbound_url, and this channel's is ${new URL(channel.webhook.outbound_url).protocol}`,
        fix: 'make outbound_url https://..., or remove "tls"',
      });
    }
    return problems;
  });
}
