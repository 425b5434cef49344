import { encodeCursor } from "../../../src/core/admin/dead-letter-cursor.js";
import type { Random } from "../seeded-random.js";
import { PATH_CHARS, PRINTABLE } from "./alphabets.js";
import { type FuzzTargets, T0 } from "./fuzz-fixture.js";

function genCursor(r: Random, f: FuzzTargets): string {
  return r.weighted<string>([
    [2, () => ""],
    [1, () => r.pick(["%", "%%", "%E0%A4%A", "abc", "!!", "====", "a=b", "+/+/", "-_-_", "AAAA", "MTox", "OjE"])],
    [1, () => encodeURIComponent(r.units(1 + r.int(40)).replace(/[\uD800-\uDFFF]/g, "\uFFFD"))],
    [1, () => r.string(1 + r.int(60), "ABCDEFabcdef0123456789-_")],
    [
      2,
      () =>
        encodeCursor({
          diedAt: r.pick([0, 1, T0, T0 - 60_000 + r.int(30), Number.MAX_SAFE_INTEGER, 2 ** 53 + 1, 1e21]),
          id: r.pick([r.pick(f.letterIds), r.pick(f.acceptedIds.length > 0 ? f.acceptedIds : ["m-1"]), r.units(5)]),
        }),
    ],
    [0.3, () => btoa(`${"9".repeat(400)}:x`).replace(/=+$/, "")],
    [0.2, () => "A".repeat(20_000)],
  ]);
}

function genQueryValue(r: Random): string {
  return r.weighted<string>([
    [3, () => r.pick(["", "0", "1", "2", "100", "500", "501", "-1", "1e3", "0x10", " 5", "5 ", "007", "1.5", "NaN"])],
    [1, () => r.pick(["١٢", "Infinity", "9".repeat(400), "%", "%%", "%E0%A4%A", "%00", "a%20b", "+"])],
    [1, () => encodeURIComponent(r.string(r.int(30), PRINTABLE))],
    [1, () => r.string(r.int(30), PATH_CHARS)],
  ]);
}

function genSince(r: Random): string {
  return r.pick([
    "2026-11-27",
    "2026-02-31",
    "2026-11-27T04:00:00Z",
    "2026-11-27T04:00:00.123456789+23:59",
    "0000-01-01T00:00:00-23:59",
    "9999-12-31T23:59:59.999999999-99:99",
    "999999999999999",
    "100000000000",
    "12",
    "-1",
    "yesterday",
    "2026-13-01",
    "%",
    encodeURIComponent(r.string(r.int(25), PRINTABLE)),
  ]);
}

function genStatus(r: Random): string {
  return r.pick(["accepted", "delivered", "retrying", "dead_lettered", "DELIVERED", "", "%", "x"]);
}

function genAdminPath(r: Random, f: FuzzTargets): string {
  const id = (): string =>
    r.weighted<string>([
      [2, () => r.pick(f.letterIds)],
      [2, () => r.pick(f.acceptedIds.length > 0 ? f.acceptedIds : ["m-1"])],
      [2, () => encodeURIComponent(r.units(1 + r.int(30)).replace(/[\uD800-\uDFFF]/g, "\uFFFD"))],
      [1, () => r.string(1 + r.int(40), PATH_CHARS).replace(/[/?#]/g, "")],
      [1, () => r.pick(["%", "%%", "%E0%A4%A", "%00", "..", ".", "%2e%2e", "%2F", "a%2Fb", "replay", ":id"])],
      [0.2, () => "x".repeat(10_000 + r.int(50_000))],
    ]);
  const query = (names: readonly string[]): string => {
    const parts: string[] = [];
    for (const name of names) {
      if (!r.chance(0.6)) continue;
      const value =
        name === "cursor"
          ? genCursor(r, f)
          : name === "since"
            ? genSince(r)
            : name === "status"
              ? genStatus(r)
              : genQueryValue(r);
      parts.push(`${name}=${value}`);
      if (r.chance(0.05)) parts.push(`${name}=${genQueryValue(r)}`);
    }
    if (r.chance(0.1)) parts.push(r.string(r.int(10), PATH_CHARS));
    return parts.length === 0 ? "" : `?${parts.join("&")}`;
  };
  return r.weighted<string>([
    [3, () => `/admin/dead-letters${query(["cursor", "limit", "channel"])}`],
    [3, () => `/admin/messages/${id()}`],
    [2, () => `/admin/messages${query(["cursor", "limit", "channel", "conversation_id", "status", "since"])}`],
    [2, () => `/admin/dead-letters/${id()}`],
    [1, () => `/admin/dead-letters/${id()}/replay`],
    [1, () => "/admin/dead-letters/replay"],
    [1, () => r.pick(["/admin/status", "/admin/activity", "/admin", "/admin/", "/admin/console.js"])],
    [
      0.5,
      () => r.pick(["/admin/console.css", "/admin/console.svg", "/admin//", "/admin/nothing", "/admin/dead-letters/"]),
    ],
  ]);
}

/**
 * A request path with its query: mostly the channels' paths and the admin API's (with ids and
 * cursors the app knows, or not), else near misses, probes and very long or broken ones.
 */
export function genPath(r: Random, f: FuzzTargets): string {
  return r.weighted<string>([
    [14, () => "/webhook"],
    [4, () => "/hooks/in"],
    [
      2,
      () =>
        r.pick([
          "/webhook/",
          "/webhook?x=1",
          "/webhook?%",
          "/WEBHOOK",
          "/%77ebhook",
          "/webhook%2F",
          "/webhook%00",
          "/webhook;x",
          "/webhook/../webhook",
          "/x/../webhook",
          "/webhook/%2e%2e/",
          "//webhook",
          "/webhook%E0%A4%A",
          "/webhook#frag",
          "/webhook/.",
          "/hooks/in/",
          "/hooks%2Fin",
          "/hooks/in%20",
          "/hooks//in",
        ]),
    ],
    [1, () => `/${r.string(1 + r.int(60), PATH_CHARS)}`],
    [0.3, () => `/${"a/".repeat(r.int(5_000))}${r.string(r.int(50_000), "abcdef%0123456789")}`],
    [1, () => r.pick(["/healthz", "/readyz", "/metrics", "/healthz/", "/readyz?x", "/HEALTHZ", "/", ""])],
    [6, () => genAdminPath(r, f)],
  ]);
}
