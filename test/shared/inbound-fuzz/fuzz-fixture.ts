import type { ConfigInput } from "../../../src/core/config/config-schema.js";
import type { DeadLetter } from "../../../src/core/dead-letters/dead-letter.js";
import { deadLetter } from "../store-contracts/dead-letter-contract-letters.js";

// What the fuzz runs against on every runtime: the channels, the dead letters, the start of the
// clock, and what the generators draw known ids from. Runtime-neutral, so that the Node fuzz
// (fuzz-app.ts) and the Workers one (test/workers/inbound-fuzz) build the same service.

/** When the fuzz's clock starts. */
export const T0 = Date.UTC(2026, 10, 27, 4, 0, 0);

/** The ids the generators draw from: the app's dead letters, and the messages it accepted so far. */
export interface FuzzTargets {
  readonly letterIds: readonly string[];
  readonly acceptedIds: readonly string[];
}

/**
 * Two webhook channels: `webhook` on /webhook (two secrets while rotating) and `hooks` on
 * /hooks/in (a body mapping, trusted proxies), each with its own auth-failure limit.
 */
export function fuzzConfig(): ConfigInput {
  return {
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { outbound_url: "http://127.0.0.1:8091/replies", auth_failure_limit: { max: 5, window_s: 30 } },
      },
      {
        type: "webhook",
        name: "hooks",
        token_env: "HOOKS_SECRET",
        webhook: {
          path: "/hooks/in",
          outbound_url: "http://127.0.0.1:8091/replies",
          mapping: { sender_id: "from", text: "body", conversation_id: "thread" },
          trusted_proxies: ["10.0.0.0/8", "::1/128"],
          auth_failure_limit: { max: 3, window_s: 10 },
        },
      },
    ],
    routes: [
      { channel: "webhook", brain: "echo" },
      { channel: "hooks", brain: "echo" },
    ],
  } as ConfigInput;
}

/** The 30 dead letters the app starts with: `dl-0` … `dl-29`, every fifth of a channel since removed. */
export function fuzzLetters(): DeadLetter[] {
  return Array.from({ length: 30 }, (_, index) =>
    deadLetter(index % 5 === 4 ? "removed-channel" : "webhook", T0 - 60_000 + index, { id: `dl-${index}` }),
  );
}
