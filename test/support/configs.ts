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
