/** The inbound secret of {@link channelConfig}. */
export const SECRET = "workers-test-secret-0123456789abcdefghijklmnopqrs";
/** Where {@link channelConfig} POSTs replies; the fake receiver answers there. */
export const OUTBOUND_URL = "https://receiver.example/replies";

/**
 * A one-channel configuration (`webhook` on `/webhook`, the echo brain) with quick retries and
 * no receiver circuit, and whatever the test adds to `webhook` or the top level.
 */
export function channelConfig(
  options: {
    webhook?: Record<string, unknown>;
    top?: Record<string, unknown>;
    delivery?: Record<string, unknown>;
  } = {},
): Record<string, unknown> {
  return {
    channels: [
      {
        type: "webhook",
        name: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: {
          path: "/webhook",
          outbound_url: OUTBOUND_URL,
          // No receiver circuit: these tests count each message's own attempts against a receiver
          // that fails; test/workers/receiver-circuit.test.ts covers the circuit.
          delivery: {
            initial_delay_ms: 1000,
            max_delay_ms: 60_000,
            max_attempts: 5,
            circuit_failures: 0,
            ...options.delivery,
          },
          ...options.webhook,
        },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    ...options.top,
  };
}

/** A random conversation id, so tests never share Durable Object state. */
export function freshConversation(): string {
  return `c-${crypto.randomUUID()}`;
}
