import { MESSAGE_FIELDS } from "../../../../src/core/config/message-fields.js";
import { OPERATOR_EVENT_TYPES } from "../../../../src/core/operator-events/operator-event.js";
import type { Random } from "../../../shared/seeded-random.js";

// Valid configurations of every shape the schema allows: the fuzz's starting points. Each key is
// given or left to its default at random, and every value is within its rule, so that a
// document no mutation touched must validate (the test checks it does).

/** A JSON object being built. */
export type Json = Record<string, unknown>;

const ENV_NAMES = ["WEBHOOK_SECRET", "HOOKS_TOKEN", "_SECRET_2", "a", "Bot_Token", "RECEIVER_TOKEN"];
const BRAIN_TYPES = ["echo", "openai", "http", "rasa", "workers-ai"] as const;

function env(r: Random): string {
  return r.pick(ENV_NAMES);
}

/** Adds `key` to `target` with probability `p`. */
function maybe(r: Random, target: Json, key: string, make: () => unknown, p = 0.4): void {
  if (r.chance(p)) target[key] = make();
}

function delivery(r: Random): Json {
  const out: Json = {};
  maybe(r, out, "timeout_ms", () => r.pick([1, 500, 10_000, 2_147_483_647]));
  maybe(r, out, "initial_delay_ms", () => r.pick([0, 50, 1_000]));
  maybe(r, out, "max_delay_ms", () => r.pick([0, 500, 600_000]));
  maybe(r, out, "max_attempts", () => r.pick([1, 3, 12, 1_000]));
  maybe(r, out, "max_age_ms", () => r.pick([0, 60_000, 86_400_000, Number.MAX_SAFE_INTEGER]));
  maybe(r, out, "circuit_failures", () => r.pick([0, 5, 10_000]));
  return out;
}

function operatorEvents(r: Random): Json {
  const out: Json = { url: r.pick(["https://ops.example.com/events", "http://127.0.0.1:9000/ops"]) };
  const signing = r.pick(["secret", "key", "both"]);
  if (signing !== "key") out.signing_secret_env = "OPERATOR_EVENTS_SIGNING_SECRET";
  if (signing !== "secret") out.signing_key_env = "OPERATOR_EVENTS_SIGNING_KEY";
  maybe(r, out, "events", () => [r.pick(OPERATOR_EVENT_TYPES), ...r.some(OPERATOR_EVENT_TYPES, 0.3)]);
  maybe(r, out, "timeout_ms", () => r.pick([1, 5_000, 60_000]));
  return out;
}

function webhook(r: Random, index: number, https: boolean): Json {
  const out: Json = {
    outbound_url: https ? "https://receiver.example.com/replies" : "http://127.0.0.1:8091/replies",
  };
  // A bind of its own (its own port, so no wildcard takes another's address), or the default one
  // shared with a path of its own.
  if (r.chance(0.4)) out.bind = `${r.pick(["127.0.0.1", "0.0.0.0", "[::1]", "localhost", "[::]"])}:${8100 + index}`;
  if (index > 0 || r.chance(0.3)) out.path = `/in/${index}`;
  maybe(r, out, "mapping", () =>
    Object.fromEntries(r.some(MESSAGE_FIELDS).map((field) => [field, `${field}_${r.pick(["in", "x"])}`])),
  );
  maybe(r, out, "buffer_capacity", () => r.pick([1, 1000, 1_000_000]));
  maybe(r, out, "max_connections", () => r.pick([1, 1024, 1_000_000]));
  maybe(r, out, "delivery", () => delivery(r));
  maybe(r, out, "signing_secret_env", () => "WEBHOOK_SIGNING_SECRET", 0.2);
  maybe(r, out, "signing_key_env", () => "WEBHOOK_SIGNING_KEY", 0.2);
  maybe(r, out, "outbound_token_env", () => env(r), 0.2);
  maybe(r, out, "trusted_proxies", () => r.some(["10.0.0.0/8", "::1/128", "127.0.0.1", "192.168.0.0/16"]));
  maybe(r, out, "auth_failure_limit", () => {
    const limit: Json = {};
    maybe(r, limit, "max", () => r.pick([1, 20, 100]), 0.6);
    maybe(r, limit, "window_s", () => r.pick([1, 60, 86_400]), 0.6);
    return limit;
  });
  if (https && r.chance(0.5)) {
    const tls: Json = {};
    if (r.chance(0.5)) Object.assign(tls, { client_cert_env: "RECEIVER_CLIENT_CERT", client_key_env: "RECEIVER_KEY" });
    if (r.chance(0.5) || Object.keys(tls).length === 0) tls.ca_env = "RECEIVER_CA";
    maybe(r, tls, "mtls_binding", () => "RECEIVER_MTLS", 0.3);
    out.tls = tls;
  }
  return out;
}

function channel(r: Random, index: number): Json {
  const out: Json = { type: "webhook", token_env: env(r), webhook: webhook(r, index, r.chance(0.4)) };
  // Unnamed, the first channel is called "webhook"; the others need a name of their own.
  if (index > 0 || r.chance(0.4)) out.name = index === 0 ? "main" : r.pick([`ch-${index}`, `é中😀 ${index}`]);
  maybe(r, out, "operator_events", () => operatorEvents(r), 0.15);
  return out;
}

function brain(r: Random, type: (typeof BRAIN_TYPES)[number], earlier: readonly string[]): Json {
  const out: Json = { type };
  if (type === "echo") return out;
  if (type === "openai") {
    out.base_url = r.pick(["http://127.0.0.1:11434/v1", "https://api.openai.com/v1"]);
    out.model = r.pick(["gpt-4o-mini", "llama3.2"]);
    maybe(r, out, "api_key_env", () => "OPENAI_API_KEY");
    maybe(r, out, "temperature", () => r.pick([0, 0.7, 2]));
    maybe(r, out, "max_tokens", () => r.pick([1, 512]));
    maybe(r, out, "send_images", () => r.chance(0.5));
  }
  if (type === "http" || type === "rasa") out.url = r.pick(["http://127.0.0.1:5000/bot", "http://127.0.0.1:5005"]);
  if (type === "http") maybe(r, out, "token_env", () => "BOT_TOKEN");
  if (type === "workers-ai") out.model = "@cf/meta/llama-3.1-8b-instruct";
  if (type === "openai" || type === "workers-ai") maybe(r, out, "system_prompt", () => "Be brief. 😀");
  if (type !== "workers-ai") maybe(r, out, "timeout_ms", () => r.pick([1, 30_000, 600_000]));
  if (type !== "rasa") {
    maybe(r, out, "max_history", () => r.pick([0, 20, 100]));
    maybe(r, out, "max_history_tokens", () => r.pick([1, 4000]));
  }
  maybe(r, out, "max_concurrency", () => r.pick([1, 16, 1024]));
  // Only brains defined before this one (or echo): no cycle, no brain naming itself.
  const targets = [...new Set(r.some(["echo", ...earlier], 0.3))];
  if (targets.length > 0 || r.chance(0.1)) out.fallback = targets;
  return out;
}

/** A valid configuration: 1 to 4 channels with their routes, 0 to 5 brains, and the optional sections. */
export function genValidConfig(r: Random): Json {
  const channels = Array.from(
    {
      length: r.weighted([
        [4, () => 1],
        [3, () => 2],
        [2, () => 3],
        [1, () => 4],
      ]),
    },
    (_, i) => channel(r, i),
  );
  const brains: Json = {};
  const names: string[] = [];
  for (let index = r.int(6); index > 0; index -= 1) {
    const name = r.pick(["llm", "bot", "rasa", "edge", "spare", "constructor", "toString", "é中😀", "a b"]);
    if (names.includes(name)) continue;
    brains[name] = brain(r, r.pick(BRAIN_TYPES), names);
    names.push(name);
  }
  const doc: Json = {
    channels,
    routes: channels.map((c) => ({ channel: c.name ?? "webhook", brain: r.pick(["echo", ...names]) })),
  };
  if (names.length > 0 || r.chance(0.1)) doc.brains = brains;
  maybe(r, doc, "$schema", () => "./config.schema.json", 0.2);
  const state = r.pick(["memory", "state_dir", "postgres"]);
  if (state === "state_dir") doc.state_dir = r.pick(["./state", "/var/lib/webhook-channel"]);
  if (state === "postgres") doc.postgres_url_env = "DATABASE_URL";
  maybe(r, doc, "log_level", () => r.pick(["debug", "info", "warn", "error"]), 0.3);
  maybe(r, doc, "shutdown_timeout_ms", () => r.pick([0, 30_000, 2_147_483_647]), 0.3);
  if (state !== "postgres") maybe(r, doc, "delivery_thread", () => r.chance(0.5), 0.3);
  maybe(r, doc, "observability", () => (r.chance(0.5) ? {} : { metrics: r.chance(0.5) }), 0.3);
  maybe(r, doc, "operator_events", () => operatorEvents(r), 0.3);
  maybe(r, doc, "timeline", () => {
    const timeline: Json = {};
    maybe(r, timeline, "retention_hours", () => r.pick([0, 1, 72, 8_760]), 0.6);
    maybe(r, timeline, "max_messages", () => r.pick([0, 10, 10_000, 100_000_000]), 0.6);
    maybe(r, timeline, "keep_text", () => r.chance(0.5), 0.6);
    return timeline;
  });
  maybe(r, doc, "conversation_memory", () => (r.chance(0.3) ? {} : { retention_hours: r.pick([1, 720, 87_600]) }));
  maybe(r, doc, "admin", () =>
    r.chance(0.5) ? { token_env: "WEBHOOK_ADMIN_SECRET" } : { token_env: "ADMIN", max_dead_letters: r.pick([1, 10]) },
  );
  return doc;
}
