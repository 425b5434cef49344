import { ChannelError } from "../channel-error.js";
import type { ChannelConfig } from "../config/config-schema.js";

/** PEM texts of a client certificate, and optionally of the CA the receiver's certificate chains to. */
export interface TlsMaterial {
  /** The client certificate, possibly followed by its intermediates; absent with a CA alone. */
  readonly cert?: string;
  readonly key?: string;
  readonly ca?: string;
}

/**
 * How a channel's reply POSTs do TLS beyond the defaults (`webhook.tls`), in what each runtime
 * can use: PEM texts for a client that opens its own connections (Node), or the name of the
 * platform binding that presents a certificate (Workers). A Poster takes what it can and fails
 * the attempt for what it cannot; each runtime refuses at start the configuration it could never
 * serve, so that failure is a backstop.
 */
export interface ClientTls {
  /** PEM from the variables of client_cert_env, client_key_env and ca_env; absent when none are set. */
  readonly material: TlsMaterial | undefined;
  /** The `[[mtls_certificates]]` binding (Workers). */
  readonly binding: string | undefined;
}

/**
 * The channel's TLS settings with the variables read, or undefined when it has none. A variable
 * that `webhook.tls` names must be set unless `mtls_binding` is given too: a file shared by
 * both runtimes names both, and the Worker has no use for the PEM variables (its loader does not
 * ask for them), while Node refuses to start without them (see the Node loader).
 */
export function readClientTls(
  channel: ChannelConfig,
  env: (name: string) => string | undefined,
): ClientTls | undefined {
  const tls = channel.webhook.tls;
  if (tls === undefined) return undefined;
  const optional = tls.mtls_binding !== undefined;
  const read = (variable: string | undefined): string | undefined => {
    if (variable === undefined) return undefined;
    const value = env(variable);
    if (value !== undefined && value !== "") return value;
    if (optional) return undefined;
    throw new ChannelError("config_invalid", `environment variable ${variable} is not set`, { variable });
  };
  const cert = read(tls.client_cert_env);
  const key = read(tls.client_key_env);
  const ca = read(tls.ca_env);
  const material: TlsMaterial | undefined =
    cert === undefined && ca === undefined
      ? undefined
      : {
          ...(cert === undefined || key === undefined ? {} : { cert, key }),
          ...(ca === undefined ? {} : { ca }),
        };
  return { material, binding: tls.mtls_binding };
}
