import { z } from "zod";
import { OPERATOR_EVENT_TYPES } from "../operator-events/operator-event.js";
import { envName, fetchedUrl } from "./schema-parts.js";

/** Time limit of one operator event POST when `timeout_ms` is not set. */
export const DEFAULT_OPERATOR_EVENT_TIMEOUT_MS = 5_000;

const eventType = z.enum(OPERATOR_EVENT_TYPES, {
  error: `must be one of ${OPERATOR_EVENT_TYPES.map((type) => JSON.stringify(type)).join(", ")}`,
});

/**
 * `operator_events`, at the top level (every channel) and in a channel (that channel, instead of
 * the top level's): where signed events about the service's own trouble are POSTed. Always
 * signed, the way replies are (Standard Webhooks), so the rule that one signing key is named is
 * part of the schema.
 */
export const operatorEventsSchema = z
  .strictObject({
    url: fetchedUrl("https://ops.example.com/webhook-channel/events").describe(
      "Where the events are POSTed as JSON (Standard Webhooks headers: webhook-id, webhook-timestamp, webhook-signature).",
    ),
    signing_secret_env: envName("OPERATOR_EVENTS_SIGNING_SECRET")
      .optional()
      .describe(
        "Variable holding the whsec_ secret the events are signed with (v1, HMAC; two separated by a space while rotating). This or signing_key_env (or both) is required: events are always signed.",
      ),
    signing_key_env: envName("OPERATOR_EVENTS_SIGNING_KEY")
      .optional()
      .describe(
        "Variable holding the whsk_ Ed25519 key the events are signed with (v1a; from webhook-channel keypair). With signing_secret_env as well, both sign.",
      ),
    events: z
      .array(eventType)
      .min(1, { error: "must list at least one event type, or be left out for all of them" })
      .optional()
      .describe(
        `The event types sent; absent: all of them (${OPERATOR_EVENT_TYPES.join(", ")}). See docs/operator-events.md.`,
      ),
    timeout_ms: z
      .int({ error: "must be a whole number of milliseconds" })
      .min(1, { error: "must be at least 1 ms" })
      .max(60_000, { error: "must be at most 60000 ms" })
      .default(DEFAULT_OPERATOR_EVENT_TIMEOUT_MS)
      .describe("Time limit of one POST of an event, in ms."),
  })
  .refine((value) => value.signing_secret_env !== undefined || value.signing_key_env !== undefined, {
    error: "names no signing variable: operator events are always signed",
    params: {
      fix: 'add "signing_secret_env": "OPERATOR_EVENTS_SIGNING_SECRET" and export OPERATOR_EVENTS_SIGNING_SECRET="whsec_$(openssl rand -base64 32)" (or "signing_key_env" with a whsk_ key)',
    },
  })
  .describe(
    "Signed events POSTed when a message is dead-lettered, a receiver goes down or comes back up, or a brain is paused or resumed. Best-effort: kept in memory, retried a few times, lost on a crash. See docs/operator-events.md.",
  );

/** `operator_events` with its defaults applied. */
export type OperatorEventsConfig = z.output<typeof operatorEventsSchema>;
