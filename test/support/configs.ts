import type { ConfigInput } from "../../src/core/config/config-schema.js";

/** A minimal valid configuration document; `overrides` replace the channel's webhook keys. */
export function configDocument(
  webhook: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
): ConfigInput {
  return {
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { outbound_url: "http://127.0.0.1:8091/replies", ...webhook },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...extra,
  } as ConfigInput;
}

/**
 * The configuration a replica of the fault tests runs: a port of its own, replies to
 * `outboundUrl` retried quickly and for long, its state in the database `DATABASE_URL` names;
 * `extra` adds to it (routes, brains).
 */
export function replicaConfigDocument(outboundUrl: string, extra: Record<string, unknown> = {}): ConfigInput {
  return configDocument(
    {
      bind: "127.0.0.1:0",
      outbound_url: outboundUrl,
      delivery: { initial_delay_ms: 50, max_delay_ms: 500, max_attempts: 1000 },
    },
    { postgres_url_env: "DATABASE_URL", ...extra },
  );
}
