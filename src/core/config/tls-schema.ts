import { z } from "zod";
import { envName } from "./schema-parts.js";

/**
 * `webhook.tls`: how a channel's reply POSTs do TLS with a receiver that wants more than the
 * public trust store: a client certificate (mutual TLS) and the CA the receiver's certificate
 * comes from. Node reads PEM from variables (or their `<NAME>_FILE`, the way container secrets
 * are mounted); Workers cannot present a certificate from a variable, and name the platform's
 * mTLS certificate binding instead. A file meant for both runtimes may hold both. The rules
 * between the keys are in `tls-problems.ts`.
 */
export const replyTlsSchema = z
  .strictObject({
    client_cert_env: envName("RECEIVER_CLIENT_CERT")
      .optional()
      .describe(
        "Node: variable holding the client certificate presented to the receiver (PEM, the intermediates after it), or <NAME>_FILE naming its file. With client_key_env.",
      ),
    client_key_env: envName("RECEIVER_CLIENT_KEY")
      .optional()
      .describe("Node: variable holding the client certificate's private key (PEM, unencrypted), or <NAME>_FILE."),
    ca_env: envName("RECEIVER_CA")
      .optional()
      .describe(
        "Node: variable holding the CA certificates (PEM) the receiver's certificate must chain to, trusted instead of the public ones, or <NAME>_FILE.",
      ),
    mtls_binding: z
      .string({ error: "must be the name of an [[mtls_certificates]] binding in wrangler.toml, e.g. RECEIVER_MTLS" })
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, {
        error:
          "must be a binding name ([A-Za-z_][A-Za-z0-9_]*) of [[mtls_certificates]] in wrangler.toml, e.g. RECEIVER_MTLS",
      })
      .optional()
      .describe(
        "Workers: the [[mtls_certificates]] binding of wrangler.toml whose fetch presents the client certificate (uploaded with wrangler mtls-certificate upload).",
      ),
  })
  .describe(
    "TLS to outbound_url (https:) beyond the public trust store: a client certificate (mutual TLS) and the receiver's CA. See docs/delivery.md#mutual-tls.",
  );
