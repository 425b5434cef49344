import { z } from "zod";
import { parseCidr } from "../net/cidr.js";
import { parseBind } from "./bind-address.js";
import { hasControlCharacter, NAME_CONTROL_MESSAGE } from "./brain-name-problems.js";
import { brainSchema } from "./brain-schema.js";
import { conversationMemorySchema } from "./conversation-memory-schema.js";
import { MESSAGE_FIELDS } from "./message-fields.js";
import { operatorEventsSchema } from "./operator-events-schema.js";
import { envName, httpUrl, TIMER_MS_LIMIT } from "./schema-parts.js";
import { timelineSchema } from "./timeline-schema.js";
import { replyTlsSchema } from "./tls-schema.js";
import { webhookPath } from "./webhook-path.js";

export { ADMIN_PATH_PREFIX, HEALTH_PATH, isAdminPath, METRICS_PATH, READY_PATH } from "./webhook-path.js";

/** The default listener: loopback only, so nothing is exposed until the operator decides to. */
export const DEFAULT_BIND = "127.0.0.1:8090";
/** The default inbound path. */
export const DEFAULT_PATH = "/webhook";
/** The default number of accepted-but-unfinished messages per channel. */
export const DEFAULT_BUFFER_CAPACITY = 1000;
/** The default number of open connections a Node listener keeps at once. */
export const DEFAULT_MAX_CONNECTIONS = 1024;
/** Dead letters kept per channel when `admin.max_dead_letters` is not set. */
export const DEFAULT_MAX_DEAD_LETTERS = 10_000;

const tokenEnv = envName("WEBHOOK_SECRET");

const bind = z
  .string({ error: 'must be a "host:port" string, e.g. "127.0.0.1:8090"' })
  .refine((value) => parseBind(value) !== undefined, {
    error:
      'must be "host:port": a host name or an IP address (IPv6 in brackets) and a port from 0 to 65535, e.g. "127.0.0.1:8090" or "[::1]:8090"',
    params: {
      fix: 'write "127.0.0.1:8090" to listen on this machine only, or "0.0.0.0:8090" for every address (behind a proxy that terminates TLS)',
    },
  });

const jsonKey = z.string({ error: "must be the JSON key the client uses, a non-empty string" }).min(1, {
  error: "must be the JSON key the client uses, a non-empty string",
});

const mapping = z
  .strictObject(
    Object.fromEntries(MESSAGE_FIELDS.map((field) => [field, jsonKey.optional()])) as Record<
      (typeof MESSAGE_FIELDS)[number],
      z.ZodOptional<typeof jsonKey>
    >,
  )
  .describe("Message field → the JSON key the client uses instead. Give only the keys that differ.");

const wholeMs = (min: number) =>
  z.int({ error: "must be a whole number of milliseconds" }).min(min, { error: `must be at least ${min} ms` });

/** A millisecond setting that becomes a timer, so capped at the longest one. */
const timerMs = (what: string, min: number, fallback: number) =>
  wholeMs(min).max(TIMER_MS_LIMIT.value, { error: TIMER_MS_LIMIT.error }).default(fallback).describe(what);

const cidr = z
  .string({ error: 'must be an IP address or CIDR block, e.g. "127.0.0.1/32" or "10.0.0.0/8"' })
  .refine((value) => parseCidr(value) !== undefined, {
    error: 'must be an IPv4 or IPv6 address or CIDR block, e.g. "127.0.0.1/32", "10.0.0.0/8" or "::1/128"',
  });

const authFailureLimit = z
  .strictObject({
    max: z
      .int({ error: "must be a whole number" })
      .min(1, { error: "must be at least 1" })
      .max(100, { error: "must be at most 100" })
      .default(20)
      .describe("Failed authentications from one client address within window_s after which it gets 429."),
    window_s: z
      .int({ error: "must be a whole number of seconds" })
      .min(1, { error: "must be at least 1 s" })
      .max(86_400, { error: "must be at most 86400 s (a day)" })
      .default(60)
      .describe("The sliding window of auth_failure_limit, in seconds."),
  })
  .describe(
    "Per client address: after max failed authentications within window_s, every request from it to this channel gets 429 with Retry-After, without its secret being checked, until the oldest failure leaves the window.",
  );

const delivery = z
  .strictObject({
    timeout_ms: timerMs("Time limit of one POST to outbound_url, in ms.", 1, 10_000),
    initial_delay_ms: timerMs(
      "Upper bound of the first retry backoff, in ms (doubles per attempt, full jitter).",
      0,
      1_000,
    ),
    max_delay_ms: timerMs("Largest retry backoff, and the cap on an honoured Retry-After, in ms.", 0, 600_000),
    max_attempts: z
      .int({ error: "must be a whole number" })
      .min(1, { error: "must be at least 1" })
      .default(12)
      .describe("Attempts in all (the first included) before a reply or message becomes a dead letter."),
    // Not a timer: a deadline compared with the clock (a hold until it is woken in slices), so it
    // may be longer than any timer.
    max_age_ms: wholeMs(0)
      .default(86_400_000)
      .describe("No retry starts later than this after the first attempt, in ms."),
    circuit_failures: z
      .int({ error: "must be a whole number" })
      .min(0, { error: "must be 0 (no circuit) or more" })
      .max(10_000, { error: "must be at most 10000" })
      .default(5)
      .describe(
        "Reply POSTs in a row that the receiver does not answer (no connection, a timeout, 5xx, 408, 425, 429) before it counts as down: replies then wait without spending attempts, and one probe at a time tries it on the retry schedule until it answers. 0: never. Default 5. See docs/delivery.md#receiver-circuit.",
      ),
  })
  .describe("How replies are delivered to outbound_url, and how failures are retried.");

/** `webhook.delivery` as the schema fills it in when a channel sets none of it. */
export const DEFAULT_DELIVERY: z.infer<typeof delivery> = delivery.parse({});

const webhook = z.strictObject({
  bind: bind.default(DEFAULT_BIND).describe("host:port to listen on; IPv6 as [::1]:8090; port 0 picks a free port."),
  path: webhookPath.default(DEFAULT_PATH).describe("URL path of the inbound endpoint."),
  outbound_url: httpUrl("http://127.0.0.1:8091/replies").describe("Where the brain's replies are POSTed as JSON."),
  mapping: mapping.optional(),
  buffer_capacity: z
    .int({ error: "must be a whole number" })
    .min(1, { error: "must be at least 1" })
    .max(1_000_000, { error: "must be at most 1000000" })
    .default(DEFAULT_BUFFER_CAPACITY)
    .describe("Accepted messages not yet finished; when full the endpoint answers 503."),
  max_connections: z
    .int({ error: "must be a whole number" })
    .min(1, { error: "must be at least 1" })
    .max(1_000_000, { error: "must be at most 1000000" })
    .default(DEFAULT_MAX_CONNECTIONS)
    .describe(
      "Node only: open connections the listener keeps at once; a new one beyond it is closed at once. Channels sharing a bind share a listener, which takes the largest of their values.",
    ),
  delivery: delivery.prefault({}),
  signing_secret_env: envName("WEBHOOK_SIGNING_SECRET")
    .optional()
    .describe(
      "Variable holding the Standard Webhooks signing secret (whsec_…; two separated by a space while rotating). Replies then carry webhook-signature.",
    ),
  signing_key_env: envName("WEBHOOK_SIGNING_KEY")
    .optional()
    .describe(
      "Variable holding the Standard Webhooks Ed25519 secret key (whsk_…, from webhook-channel keypair; two separated by a space while rotating). Replies then carry a v1a signature that receivers verify with the whpk_ public key; with signing_secret_env as well, both schemes sign.",
    ),
  tls: replyTlsSchema.optional(),
  outbound_token_env: envName("RECEIVER_TOKEN")
    .optional()
    .describe("Variable holding a token sent as Authorization: Bearer <token> with every reply."),
  trusted_proxies: z
    .array(cidr)
    .default([])
    .describe(
      'Proxies (addresses or CIDR blocks, e.g. "127.0.0.1/32", "10.0.0.0/8", "::1/128") whose X-Forwarded-For is believed: a request from one of them counts as coming from the right-most X-Forwarded-For address that is not one of them. Empty: the socket\'s peer is the client (on Workers, CF-Connecting-IP).',
    ),
  auth_failure_limit: authFailureLimit.prefault({}),
});

const channel = z.strictObject({
  type: z.literal("webhook", { error: 'must be "webhook", the only channel type' }),
  name: z
    .string({ error: "must be a non-empty string" })
    .min(1, { error: "must be a non-empty string" })
    .refine((name) => !hasControlCharacter(name), { error: `${NAME_CONTROL_MESSAGE}: use printable characters` })
    .optional()
    .describe("Channel name that routes refer to; defaults to the type. No control characters."),
  token_env: tokenEnv.describe(
    "Name of the environment variable that holds the inbound Bearer secret (two separated by one space while rotating; both are accepted).",
  ),
  webhook,
  operator_events: operatorEventsSchema
    .optional()
    .describe(
      "This channel's operator events (its dead letters, its receiver down and up, the brains its route asks), instead of the top-level operator_events. See docs/operator-events.md.",
    ),
});

const route = z.strictObject({
  channel: z.string({ error: "must name a configured channel" }),
  brain: z.string({ error: 'must name a brain: "echo" or one defined under "brains"' }),
});

/**
 * The configuration file's schema. Cross-field rules (routes, duplicate binds, mapping
 * collisions, secrets in the file) are checked by `validateConfig`, which also names fixes.
 */
export const configSchema = z
  .strictObject({
    $schema: z.string().optional().describe("Path or URL of config.schema.json, for editors."),
    channels: z.array(channel).min(1, { error: "must list at least one channel" }),
    routes: z.array(route),
    brains: z.record(z.string(), brainSchema).optional().describe("Named brain definitions that routes may refer to."),
    state_dir: z
      .string({ error: "must be a folder path" })
      .min(1, { error: "must be a folder path" })
      .optional()
      .describe("Folder for durable state (SQLite). Absent: everything is kept in memory and a crash loses it."),
    postgres_url_env: envName("DATABASE_URL")
      .optional()
      .describe(
        "Node only: names the environment variable holding a postgres:// URL (TLS parameters such as sslmode are honoured). Everything state_dir would keep then lives in that database, which several replicas of the service share. Not with state_dir or delivery_thread. See docs/deployment.md#several-replicas.",
      ),
    log_level: z
      .enum(["debug", "info", "warn", "error"], { error: 'must be one of "debug", "info", "warn", "error"' })
      .default("info")
      .describe("Lowest level that is logged; message text is logged only at debug."),
    shutdown_timeout_ms: z
      .int({ error: "must be a whole number of milliseconds" })
      .min(0, { error: "must be 0 or more" })
      .max(TIMER_MS_LIMIT.value, { error: TIMER_MS_LIMIT.error })
      .default(30_000)
      .describe("On SIGTERM/SIGINT, how long accepted messages may take to finish before exit."),
    delivery_thread: z
      .boolean({ error: "must be true or false" })
      .default(false)
      .describe(
        "Node only: run brain calls and outbound posts on a second thread, so that the service can use two cores. Pays off above a few thousand messages per second; costs about 25 MB and more CPU per message at low rates.",
      ),
    observability: z
      .strictObject({
        metrics: z
          .boolean({ error: "must be true or false" })
          .default(true)
          .describe(
            "Node: serve GET /metrics (Prometheus text format, open like /healthz) on every listener; false answers it with 404 and records nothing. Workers write to the METRICS Analytics Engine binding when it exists, whatever this says.",
          ),
      })
      .prefault({})
      .describe("What the service exposes for monitoring; see docs/operations.md."),
    operator_events: operatorEventsSchema.optional(),
    timeline: timelineSchema.prefault({}),
    conversation_memory: conversationMemorySchema.prefault({}),
    admin: z
      .strictObject({
        token_env: envName("WEBHOOK_ADMIN_SECRET").describe(
          "Names the admin secret that /admin/ requests send as Authorization: Bearer: on Node an environment variable (or NAME_FILE), on Workers a Worker secret. Must differ from every channel secret.",
        ),
        max_dead_letters: z
          .int({ error: "must be a whole number" })
          .min(1, { error: "must be 1 or more" })
          .default(DEFAULT_MAX_DEAD_LETTERS)
          .describe(
            "Dead letters kept per channel; beyond that the oldest is dropped, with a warning. Without admin, state_dir and Postgres keep 10000 per channel.",
          ),
      })
      .optional()
      .describe(
        "Turns on the admin API (/admin/dead-letters) on Node and on Workers; absent, every /admin/ path is 404. See docs/operations.md.",
      ),
  })
  .describe("webhook-channel configuration");

/** The configuration as written (defaults not yet applied). */
export type ConfigInput = z.input<typeof configSchema>;
/** The configuration with defaults applied, as the service uses it. */
export type Config = z.output<typeof configSchema>;
/** One configured channel, defaults applied. */
export type ChannelConfig = Config["channels"][number];
/** One brain definition. */
export type BrainConfig = z.output<typeof brainSchema>;
