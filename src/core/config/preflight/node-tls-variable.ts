/**
 * True for the JSON path of a `webhook.tls` variable (`client_cert_env`, `client_key_env`,
 * `ca_env`): only Node reads them; the Worker presents a client certificate through its
 * `mtls_binding` instead, so a check of what the Worker sees does not ask for them.
 */
export function isNodeTlsVariable(path: string): boolean {
  return /^channels\[\d+\]\.webhook\.tls\./.test(path);
}
