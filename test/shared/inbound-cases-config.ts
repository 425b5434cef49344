/**
 * What every shared inbound case assumes (inbound-cases.ts): the configuration, the secret
 * its channels read and the body size limit under test. Runtime-neutral, like the cases.
 */

/** The inbound secret the cases authenticate with. */
export const INBOUND_CASES_SECRET = "inbound-cases-secret-0123456789abcdefghijklmnop";

/** The variable that holds {@link INBOUND_CASES_SECRET}. */
export const INBOUND_CASES_SECRET_ENV = "INBOUND_CASES_SECRET";

/** Where replies would go; the cases never wait for one. */
export const INBOUND_CASES_OUTBOUND_URL = "http://127.0.0.1:9/replies";

/**
 * The configuration the cases assume: a plain channel on `/webhook`, and a channel with a
 * mapping on `/mapped`. Both share one bind, so one Node listener serves both, as one
 * Worker does.
 */
export const INBOUND_CASES_CONFIG = {
  channels: [
    {
      type: "webhook",
      name: "plain",
      token_env: INBOUND_CASES_SECRET_ENV,
      webhook: { bind: "127.0.0.1:0", path: "/webhook", outbound_url: INBOUND_CASES_OUTBOUND_URL },
    },
    {
      type: "webhook",
      name: "mapped",
      token_env: INBOUND_CASES_SECRET_ENV,
      webhook: {
        bind: "127.0.0.1:0",
        path: "/mapped",
        outbound_url: INBOUND_CASES_OUTBOUND_URL,
        mapping: { sender_id: "user", text: "message", conversation_id: "thread" },
      },
    },
  ],
  routes: [
    { channel: "plain", brain: "echo" },
    { channel: "mapped", brain: "echo" },
  ],
} as const;

/** The largest accepted body: 1 MiB. */
export const ONE_MIB = 1_048_576;
