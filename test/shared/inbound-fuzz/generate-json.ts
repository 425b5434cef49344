import type { Random } from "../seeded-random.js";
import { PRINTABLE } from "./alphabets.js";

/** A JSON value of any type, at most `depth` deep. */
export function genJsonValue(r: Random, depth: number): unknown {
  const leaves: readonly (() => unknown)[] = [
    () => null,
    () => r.chance(0.5),
    () => r.pick([0, -0, 1, -1, 1.5, 1e21, Number.MAX_SAFE_INTEGER, 2 ** 53 + 1, -1e-7]),
    () => r.string(r.int(20), PRINTABLE),
    () => r.units(r.int(10)),
  ];
  if (depth <= 0 || r.chance(0.5)) return r.pick(leaves)();
  if (r.chance(0.5)) return Array.from({ length: r.int(4) }, () => genJsonValue(r, depth - 1));
  const object: Record<string, unknown> = {};
  for (let index = r.int(4); index > 0; index -= 1)
    object[r.string(1 + r.int(8), PRINTABLE)] = genJsonValue(r, depth - 1);
  return object;
}

/** The names a channel's message body gives its sender, text and conversation. */
export interface Keys {
  readonly sender: string;
  readonly text: string;
  readonly conversation: string;
}

/** The webhook channel's default names. */
export const WEBHOOK_KEYS: Keys = { sender: "sender_id", text: "text", conversation: "conversation_id" };
/** The `hooks` channel's names, from its mapping. */
export const HOOKS_KEYS: Keys = { sender: "from", text: "body", conversation: "thread" };

/** A field's JSON source: a value of the right type, of a wrong one, or written by hand. */
function genFieldSource(r: Random, field: "id" | "text" | "url" | "type"): string {
  const literal = (value: unknown): string => JSON.stringify(value) ?? "null";
  return r.weighted<string>([
    [
      8,
      () => {
        if (field === "url") return literal(r.pick(["https://example.com/a.png", "http://127.0.0.1:9/x?y=z"]));
        if (field === "type") return literal(r.pick(["image/png", "text/plain; charset=utf-8"]));
        if (field === "id") return literal(r.pick(["alice", "u-1", "42", "🙂", "a".repeat(256), "😀".repeat(256)]));
        return literal(r.pick(["hi", "hello there", "😀 emoji", "line\nbreak", "tab\there", "\u0000nul", "ok"]));
      },
    ],
    [2, () => literal(genJsonValue(r, 2))],
    [
      2,
      () =>
        r.pick([
          "12345",
          "1e400",
          "-1e400",
          "1e-400",
          "-0",
          "true",
          "null",
          "{}",
          "[]",
          '{"text":"nested"}',
          '[""]',
          '""',
          '"   "',
          '"\\t\\n"',
          '"\\u0000"',
          '"a\\u0000b"',
          '"\\ud800"',
          '"\\udc00x"',
          '"x\\ud83d"',
          '"\\ud83d\\ude00"',
          '"\\uDBFF\\uDFFF"',
          '"\\u00e9"',
          '"\\uFEFF"',
          '"\\u2028\\u2029"',
          '"javascript:alert(1)"',
          '"http:x"',
          '" https://example.com/a.png"',
          '"https://exa mple.com/"',
          '"https://"',
          '"ftp://example.com/a"',
          '"image/"',
          '"/png"',
          '"image/png; x"',
          '"toString"',
          '"__proto__"',
        ]),
    ],
    [
      2,
      () =>
        r.pick([
          "0",
          "-1",
          "1.5",
          "1e21",
          "-0.0",
          "123456789012345678901234567890",
          "1e-7",
          "5e-324",
          "1.7976931348623157e308",
          "9007199254740993",
        ]),
    ],
    [0.3, () => literal("x".repeat(257 + r.int(2_000)))],
    [0.2, () => literal("long text ".repeat(10_000 + r.int(60_000)))],
  ]);
}

/** A JSON object body, most of them close to a valid message, as its source text. */
export function genObjectSource(r: Random, keys: Keys): string {
  const members: string[] = [];
  const add = (key: string, source: string) => members.push(`${JSON.stringify(key)}:${source}`);
  if (r.chance(0.85))
    add(
      r.chance(0.95) ? keys.sender : r.pick(["sender_id", "from", "Sender_Id", "sender id"]),
      genFieldSource(r, "id"),
    );
  if (r.chance(0.85))
    add(r.chance(0.95) ? keys.text : r.pick(["text", "body", "Text", "message"]), genFieldSource(r, "text"));
  if (r.chance(0.2)) add(keys.conversation, genFieldSource(r, "id"));
  if (r.chance(0.1)) add("sender_name", genFieldSource(r, "text"));
  if (r.chance(0.15)) add("media_url", genFieldSource(r, "url"));
  if (r.chance(0.1)) add("media_type", genFieldSource(r, "type"));
  if (r.chance(0.15))
    add(
      r.pick(["__proto__", "constructor", "toString", "extra", "", "hasOwnProperty"]),
      JSON.stringify(genJsonValue(r, 2)) ?? "null",
    );
  if (r.chance(0.1)) add(keys.sender, genFieldSource(r, "id"));
  if (r.chance(0.1)) add(keys.text, genFieldSource(r, "text"));
  if (r.chance(0.1)) add(r.string(1 + r.int(10), PRINTABLE), JSON.stringify(genJsonValue(r, 3)) ?? "null");
  if (r.chance(0.05)) add("deep", deepNesting(1_000 + r.int(200_000), "[", "]", "0"));
  // Keys in any order: the members are shuffled.
  for (let index = members.length - 1; index > 0; index -= 1) {
    const other = r.int(index + 1);
    const held = members[index] ?? "";
    members[index] = members[other] ?? "";
    members[other] = held;
  }
  const spacing = r.pick(["", " ", "\n", "\t \r\n"]);
  return `{${spacing}${members.join(`,${spacing}`)}${spacing}}`;
}

/** `inner` inside `depth` levels of `open` … `close`. */
export function deepNesting(depth: number, open: string, close: string, inner = "1"): string {
  return `${open.repeat(depth)}${inner}${close.repeat(depth)}`;
}
