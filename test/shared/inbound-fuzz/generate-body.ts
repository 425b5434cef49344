import type { Random } from "../seeded-random.js";
import type { FuzzTargets } from "./fuzz-fixture.js";
import { deepNesting, genJsonValue, genObjectSource, type Keys } from "./generate-json.js";

const MIB = 1_048_576;

/** A generated body, with what it was made as (for the failure message). */
export interface MadeBody {
  readonly body: string | Uint8Array;
  readonly kind: string;
}

/**
 * A channel's message body under `keys`: mostly a near-valid object, else broken, top-level,
 * duplicate-key, BOM-led, deeply nested, non-UTF-8 and around-the-limit ones.
 */
export function genBody(r: Random, keys: Keys): MadeBody {
  return r.weighted<MadeBody>([
    [14, () => ({ body: genObjectSource(r, keys), kind: "object" })],
    [1, () => ({ body: "", kind: "empty" })],
    [
      2,
      () => {
        const valid = genObjectSource(r, keys);
        return { body: valid.slice(0, r.int(valid.length)), kind: "truncated" };
      },
    ],
    [
      2,
      () => ({
        body: r.pick([
          "{",
          "}",
          "{'sender_id':'a','text':'hi'}",
          '{"sender_id":"a","text":"hi",}',
          '{"sender_id":"a" "text":"hi"}',
          '{"sender_id":"a","text":"hi"}{}',
          '{"sender_id":"a","text":"hi"} x',
          "nul",
          "NaN",
          "Infinity",
          "[1,]",
          "undefined",
          '{"text":"raw\u0000nul"}',
          '{"text":"raw\ncontrol"}',
          '{"sender_id":"a","text":"\\x41"}',
          '{"sender_id":"a","text":"\\u12"}',
          '{"sender_id":01,"text":"hi"}',
          "\u0000",
          "{\u0000}",
          "/* comment */ {}",
        ]),
        kind: "invalid-json",
      }),
    ],
    [
      2,
      () => ({
        body: r.pick([
          "null",
          "true",
          "false",
          "0",
          "-0",
          "1e400",
          '"a string"',
          "[]",
          "[{}]",
          '[{"sender_id":"a","text":"hi"}]',
          '""',
          " ",
          "\n",
        ]),
        kind: "top-level",
      }),
    ],
    [
      1,
      () => ({
        body: r.pick([
          `{"${keys.sender}":"a","${keys.sender}":5,"${keys.text}":"x"}`,
          `{"${keys.sender}":"a","${keys.text}":{},"${keys.text}":"hi"}`,
          `{"${keys.sender}":"a","${keys.text}":"hi","${keys.text}":null}`,
        ]),
        kind: "duplicate-keys",
      }),
    ],
    [
      1,
      () => ({
        body: `${r.pick(["\uFEFF", "\uFEFF\uFEFF", " \uFEFF"])}{"${keys.sender}":"a","${keys.text}":"bom"}`,
        kind: "bom",
      }),
    ],
    [
      1,
      () => {
        const depth = r.pick([64, 1_000, 10_000, 100_000, 400_000]);
        const inner = `{"${keys.sender}":"a","${keys.text}":"deep"}`;
        return r.chance(0.5)
          ? { body: deepNesting(depth, "[", "]", inner), kind: `deep-array-${depth}` }
          : {
              body: `{"${keys.sender}":"a","${keys.text}":"deep","x":${deepNesting(depth, '{"a":', "}")}}`,
              kind: `deep-object-${depth}`,
            };
      },
    ],
    [1, () => ({ body: r.bytes(r.int(200)), kind: "random-bytes" })],
    [
      1,
      () => {
        const prefix = new TextEncoder().encode(`{"${keys.sender}":"a","${keys.text}":"`);
        const bad = r.pick([
          [0xff],
          [0xc3],
          [0xed, 0xa0, 0x80],
          [0xf4, 0x90, 0x80, 0x80],
          [0xc0, 0xaf],
          [0xe2, 0x82],
          [0xef, 0xbf, 0xbe],
        ]);
        const suffix = new TextEncoder().encode('"}');
        return { body: Uint8Array.from([...prefix, ...bad, ...suffix]), kind: "bad-utf8" };
      },
    ],
    [
      0.5,
      () => ({
        body: Uint8Array.from([
          0xff,
          0xfe,
          ...Array.from(new TextEncoder().encode(`{"${keys.sender}":"a"}`)).flatMap((byte) => [byte, 0]),
        ]),
        kind: "utf16le",
      }),
    ],
    [
      0.3,
      () => {
        const size = r.pick([MIB - 40, MIB, MIB + 1, 2 * MIB]);
        const head = `{"${keys.sender}":"a","${keys.text}":"`;
        return { body: `${head}${"x".repeat(Math.max(0, size - head.length - 2))}"}`, kind: `size-${size}` };
      },
    ],
  ]);
}

/** A dead-letter replay body: known and unknown channels and ids, wrong shapes, bytes, over 64 KiB. */
export function genReplayBody(r: Random, f: FuzzTargets): MadeBody {
  return r.weighted<MadeBody>([
    [2, () => ({ body: "", kind: "replay-empty" })],
    [
      3,
      () => ({
        body: r.pick([
          "{}",
          '{"channel":"webhook"}',
          '{"channel":"hooks"}',
          '{"channel":"removed-channel"}',
          '{"channel":"nope"}',
          `{"ids":${JSON.stringify([r.pick(f.letterIds), r.pick(f.letterIds)])}}`,
          `{"channel":"webhook","ids":["${r.pick(f.letterIds)}"]}`,
          '{"ids":"dl-1"}',
          '{"ids":[1,2]}',
          '{"chanel":"webhook"}',
          '{"channel":5}',
          "[]",
          "null",
          "{",
          '{"ids":["\\ud800"]}',
          "\uFEFF{}",
        ]),
        kind: "replay-json",
      }),
    ],
    [1, () => ({ body: JSON.stringify(genJsonValue(r, 3)) ?? "", kind: "replay-random-json" })],
    [1, () => ({ body: r.bytes(r.int(100)), kind: "replay-bytes" })],
    [0.2, () => ({ body: `{"ids":[${'"x",'.repeat(20_000)}"x"]}`, kind: "replay-over-64k" })],
  ]);
}
