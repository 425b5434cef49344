import { isRecord } from "../../../../src/core/is-record.js";
import type { Random } from "../../../shared/seeded-random.js";
import { misspell } from "./generic-mutations.js";
import { putOwn, withOwnKey } from "./json-places.js";
import type { Json } from "./valid-config.js";

// Mutations that know the configuration's shape: they break the rules between keys (names,
// endpoints, routes, fallbacks, state, TLS, mapping) and the required keys' spelling, where a
// schema-blind mutation would rarely land. Each returns a label, as the generic ones do.

/** Sets `values` on `target` (keys the schema knows, never `__proto__`) and returns `label`. */
function set(target: Json, values: Json, label: string): string {
  Object.assign(target, values);
  return label;
}

function records(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

/** The `webhook` object of `channel`, made when it has none. */
function webhookOf(channel: Json): Json {
  if (!isRecord(channel.webhook)) channel.webhook = { outbound_url: "http://127.0.0.1:8091/replies" };
  return channel.webhook as Json;
}

function brainsOf(doc: Json): Json {
  if (!isRecord(doc.brains)) doc.brains = {};
  return doc.brains as Json;
}

/** Required keys and the objects holding them, for typos that `joinMisspelledKeys` should name. */
function requiredHolders(doc: Json): [Json, string][] {
  const holders: [Json, string][] = [
    [doc, "channels"],
    [doc, "routes"],
  ];
  for (const channel of records(doc.channels)) {
    holders.push([channel, "type"], [channel, "token_env"], [channel, "webhook"]);
    if (isRecord(channel.webhook)) holders.push([channel.webhook, "outbound_url"]);
  }
  for (const route of records(doc.routes)) holders.push([route, "channel"], [route, "brain"]);
  return holders;
}

/** One mutation that breaks a rule of the configuration; the label says which. */
export function configMutation(r: Random, doc: Json): string {
  const channels = records(doc.channels);
  const routes = records(doc.routes);
  const channel = channels.length > 0 ? r.pick(channels) : undefined;
  return r.weighted<string>([
    [
      2,
      () => {
        if (channel === undefined || !Array.isArray(doc.channels)) return "no channel";
        // A channel nested thousands deep cannot be cloned: then the copy is the same object.
        let copy: Json = channel;
        try {
          copy = structuredClone(channel);
        } catch {}
        doc.channels.push(copy);
        return "duplicated a channel";
      },
    ],
    [
      2,
      () => {
        const [a, b] = [r.pick(channels.length > 0 ? channels : [{}]), channel];
        if (b === undefined) return "no channel";
        if (r.chance(0.5)) b.name = a.name ?? "webhook";
        else delete b.name;
        return "gave two channels one name";
      },
    ],
    [
      2,
      () => {
        if (channels.length < 2 || channel === undefined) return "one channel";
        const other = r.pick(channels.filter((c) => c !== channel));
        const [mine, theirs] = [webhookOf(channel), webhookOf(other)];
        mine.path = theirs.path ?? "/webhook";
        const port = 8_200 + r.int(3);
        const binds = r.pick([
          [theirs.bind ?? "127.0.0.1:8090", theirs.bind ?? "127.0.0.1:8090"],
          [`0.0.0.0:${port}`, `127.0.0.1:${port}`],
          [`[::]:${port}`, `[::1]:${port}`],
          [`localhost:${port}`, `0.0.0.0:${port}`],
          ["127.0.0.1:0", "0.0.0.0:0"],
        ]);
        [mine.bind, theirs.bind] = r.chance(0.5) ? binds : [binds[1], binds[0]];
        return `shared an endpoint or port (${binds.join(", ")})`;
      },
    ],
    [
      3,
      () => {
        const route = routes.length > 0 ? r.pick(routes) : undefined;
        if (route === undefined || !Array.isArray(doc.routes)) return "no route";
        const list: unknown[] = doc.routes;
        return r.weighted<string>([
          [1, () => set(route, { channel: r.pick(["nope", "", "Webhook", "webhook "]) }, "routed an unknown channel")],
          [
            1,
            () =>
              set(
                route,
                { brain: r.pick(["nope", "", "ECHO", "__proto__", "constructor"]) },
                "routed an unknown brain",
              ),
          ],
          [1, () => set(doc, { routes: [...list, { ...route }] }, "routed a channel twice")],
          [1, () => set(doc, { routes: list.filter((other) => other !== route) }, "dropped a route")],
        ]);
      },
    ],
    [
      3,
      () => {
        const brains = brainsOf(doc);
        for (const name of ["a", "b"]) if (!isRecord(brains[name])) brains[name] = { type: "http", url: "http://x/" };
        const [a, b] = [brains.a as Json, brains.b as Json];
        return r.weighted<string>([
          [1, () => set(a, { fallback: ["a"] }, "a brain falls back to itself")],
          [1, () => set(a, { fallback: ["nope", 7, ""] }, "a fallback to no brain")],
          [1, () => set(a, { fallback: ["b", "b", "echo"] }, "a fallback listed twice")],
          [1, () => set(b, { fallback: ["echo", "a"] }, set(a, { fallback: ["b"] }, "a fallback cycle"))],
          [1, () => set(a, { fallback: "b" }, "a fallback that is no list")],
        ]);
      },
    ],
    [
      2,
      () => {
        const name = r.pick(["echo", "", "__proto__"]);
        const brains = brainsOf(doc);
        const definition = { type: r.pick(["echo", "http"]), url: "http://127.0.0.1:5000/" };
        // Brains nested thousands deep cannot be written as JSON: then the key is made own directly.
        try {
          doc.brains = withOwnKey(brains, name, definition);
        } catch {
          putOwn(brains, name, definition);
        }
        return `defined a brain named ${JSON.stringify(name)}`;
      },
    ],
    [
      2,
      () => {
        doc.postgres_url_env = "DATABASE_URL";
        if (r.chance(0.5)) doc.state_dir = "./state";
        else doc.delivery_thread = true;
        return "postgres with state_dir or delivery_thread";
      },
    ],
    [
      2,
      () => {
        if (channel === undefined) return "no channel";
        const hook = webhookOf(channel);
        hook.tls = r.pick([{}, { client_cert_env: "CERT" }, { client_key_env: "KEY" }, { ca_env: "CA" }]);
        if (r.chance(0.5)) hook.outbound_url = "https://receiver.example.com/";
        return `tls ${JSON.stringify(hook.tls)} to ${String(hook.outbound_url)}`;
      },
    ],
    [
      2,
      () => {
        if (channel === undefined) return "no channel";
        const hook = webhookOf(channel);
        hook.mapping = r.pick([
          { text: "sender_id" },
          { text: "body", sender_id: "body" },
          { conversation_id: "message_id" },
          { media_url: "brain" },
          { sender_name: "" },
        ]);
        return `mapping ${JSON.stringify(hook.mapping)}`;
      },
    ],
    [
      1,
      () => {
        if (channel === undefined) return "no channel";
        if (r.chance(0.5)) channel.mode = "push";
        else webhookOf(channel).mode = "pull";
        return "a mode key";
      },
    ],
    [
      2,
      () => {
        if (channel === undefined) return "no channel";
        const hook = webhookOf(channel);
        return r.weighted<string>([
          [1, () => set(hook, { bind: `0.0.0.0:${9_000 + r.int(1_000)}` }, "a bind that is not loopback")],
          [1, () => set(hook, { delivery: { max_attempts: 2, circuit_failures: 50 } }, "fewer attempts than failures")],
          [
            1,
            () =>
              set(
                doc,
                { timeline: { retention_hours: 1, max_messages: 1 }, admin: { token_env: "A" } },
                "a short timeline",
              ),
          ],
          [1, () => set(doc, { operator_events: { url: "https://ops.example.com/" } }, "unsigned operator events")],
        ]);
      },
    ],
    [
      3,
      () => {
        const [holder, key] = r.pick(requiredHolders(doc));
        if (!(key in holder)) return "nothing to misspell";
        const typo = misspell(r, key);
        holder[typo] = holder[key];
        delete holder[key];
        return `misspelled ${key} as ${JSON.stringify(typo)}`;
      },
    ],
  ]);
}
