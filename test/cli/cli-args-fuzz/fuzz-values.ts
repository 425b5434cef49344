import { MESSAGE_STATUSES } from "../../../src/core/timeline/timeline-event.js";
import type { Random } from "../../shared/seeded-random.js";
import type { World } from "./fuzz-world.js";

/** Characters of made-up words: plain, shell-special, flag-like and non-ASCII ones. */
const WORD_CHARS = "abcxyz019-_./=:@?#%$'\" \\é中😀\u202e";

/**
 * Values that trip naive argument handling: empty, blank, what looks like a flag or the end of
 * the flags, shell and format syntax, odd unicode (combining, RTL override, BOM, a lone
 * surrogate, NUL, which no shell can pass but the in-process runner can).
 */
const ODD_STRINGS = [
  "",
  " ",
  "-",
  "--",
  "---",
  "-x",
  "--json",
  "--all",
  "--url",
  "-c",
  "--=x",
  "é中😀",
  "e\u0301",
  "\u202eevil",
  "\ufeff",
  "\ud800",
  "a\u0000b",
  "\n",
  "\t",
  "$(echo hi)",
  "'",
  '"',
  "%s%n",
  "null",
  "0",
  "-1",
];

/** One of the odd strings, a made-up word, or a huge value. */
export function genOddString(r: Random): string {
  return r.weighted<string>([
    [5, () => r.pick(ODD_STRINGS)],
    [3, () => r.string(r.between(1, 24), WORD_CHARS)],
    [0.3, () => "x".repeat(100_000)],
    [0.3, () => "é".repeat(20_000)],
    [0.2, () => `--${"a".repeat(5_000)}`],
  ]);
}

/** A configuration path: mostly the world's files (each source's way to end), else odd ones. */
export function genFile(r: Random, w: World): string {
  const f = w.files;
  return r.weighted<string>([
    [3, () => f.state],
    [2, () => f.valid],
    [2, () => f.admin],
    [2, () => f.postgres],
    [1, () => f.emptyState],
    [1, () => f.timelineOff],
    [1, () => f.devVars],
    [1, () => f.invalid],
    [1, () => f.notJson],
    [1, () => f.folder],
    [1, () => f.missing],
    [1, () => r.pick(["./config.json", "config.json", "valid.json", "state/config.json", "/dev/null", "/"])],
    [0.3, () => `${"a/".repeat(3_000)}config.json`],
    [1.5, () => genOddString(r)],
  ]);
}

/** A dead letter's or a message's id: plausible, blank, huge or odd. */
export function genId(r: Random): string {
  return r.weighted<string>([
    [4, () => r.pick(["0b6a4c3e-1f7d-4a51-9d43-5b1f0e2c7a10", "m1", "5ad3f272-1153-4dc3-a3b7-0578692e8cda"])],
    [1, () => r.pick(["../../etc/passwd", "a/b", "%2F", "?x=1", "#frag", "id with spaces"])],
    [2, () => genOddString(r)],
  ]);
}

/** A conversation's or a channel's name. */
export function genName(r: Random): string {
  return r.chance(0.5) ? r.pick(["alice", "webhook", "hooks", "Alice", "webhook "]) : genOddString(r);
}

/** `--status`: every valid one, near misses, odd values. */
export function genStatus(r: Random): string {
  return r.weighted<string>([
    [3, () => r.pick(MESSAGE_STATUSES)],
    [2, () => r.pick(["lost", "DELIVERED", " delivered", "dead-letter", "deliver", "*"])],
    [1, () => genOddString(r)],
  ]);
}

/** `--since`: ISO dates and times, epoch milliseconds, and what the calendar or the range refuses. */
export function genSince(r: Random): string {
  return r.weighted<string>([
    [3, () => r.pick(["2026-11-27T04:00:00Z", "2026-11-27", "1795752885325", "2026-11-27T04:00:00+02:00"])],
    [
      3,
      () =>
        r.pick([
          "2026-02-30",
          "2026-13-01",
          "2026-11-27T25:00:00Z",
          "1700000000",
          "9999999999999999",
          "yesterday",
          "+275760-09-13T00:00:00.001Z",
          "-271821-04-20T00:00:00.000Z",
          "2026-11-27T04:00:00.123456789Z",
          "NaN",
        ]),
    ],
    [1, () => genOddString(r)],
  ]);
}

/** `--limit`: the range's edges, past them, and numbers in other spellings. */
export function genLimit(r: Random): string {
  return r.weighted<string>([
    [3, () => r.pick(["1", "100", "500", "001", String(r.between(1, 500))])],
    [
      3,
      () =>
        r.pick(["0", "501", "-1", "1.5", "1e2", " 5", "5 ", "٣", "0x10", "Infinity", "NaN", "99999999999999999999"]),
    ],
    [1, () => genOddString(r)],
  ]);
}

/** `--cursor`: one the CLI made, and what is not one. */
export function genCursor(r: Random, w: World): string {
  return r.weighted<string>([
    [2, () => w.cursor],
    [2, () => r.pick(["abc", "MTc5", "!!", "MTc5NTc1Mjg4NTMyNTo2ZGJi…", `${w.cursor}=`, "AAAA"])],
    [1, () => genOddString(r)],
  ]);
}

/** A variable's name for `--admin-token-env` or `public-key --env`: set, unset, and no name at all. */
export function genVariable(r: Random): string {
  return r.weighted<string>([
    [4, () => r.pick(["WEBHOOK_ADMIN_SECRET", "OTHER_ADMIN", "WEBHOOK_SIGNING_KEY", "OTHER_KEY", "UNSET_VAR"])],
    [2, () => r.pick(["1BAD", "A-B", "A B", "é", "OTHER_KEY_FILE", "_", "a".repeat(10_000)])],
    [1, () => genOddString(r)],
  ]);
}

/** `serve --bind`. */
export function genBind(r: Random): string {
  return r.chance(0.6) ? r.pick(["127.0.0.1:0", "nope", "[::1]:99999", ":8090"]) : genOddString(r);
}
