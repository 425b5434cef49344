import type { Random } from "../seeded-random.js";
import { PRINTABLE } from "./alphabets.js";
import { ADMIN_SECRET, HOOKS_SECRET, SECRETS, WEBHOOK_PREVIOUS_SECRET, WEBHOOK_SECRET } from "./fuzz-secrets.js";

/** An Authorization header for `path`: mostly its right secret, else near misses, other schemes, none. */
export function genAuthorization(r: Random, path: string): string | undefined {
  const isAdmin = path.startsWith("/admin");
  const right = isAdmin ? ADMIN_SECRET : path.startsWith("/hooks") ? HOOKS_SECRET : WEBHOOK_SECRET;
  return r.weighted<string | undefined>([
    [2, () => undefined],
    [12, () => `Bearer ${right}`],
    [1, () => `${r.pick(["bearer", "BEARER", "bEaReR"])}${" ".repeat(1 + r.int(3))}${right}`],
    [1, () => `Bearer ${right}${r.pick([" ", "  \t", "\t"])}`],
    [1, () => `${r.pick(["", " ", "\t"])}Bearer ${right}`],
    [0.5, () => `Bearer\t${right}`],
    [0.5, () => `Bearer ${WEBHOOK_PREVIOUS_SECRET}`],
    [1, () => `Bearer ${r.pick(SECRETS)}`],
    [1, () => r.pick(["Basic czNjcmV0", "Bearer", "Bearer ", "Token abc", right, `Bearer ${right}x`])],
    [1, () => `Bearer ${right.slice(0, -1)}${r.pick(["", "é", "\u00ff", "0"])}`],
    [1, () => `Bearer ${r.latin1(1 + r.int(80))}`],
    [0.3, () => `Bearer ${"x".repeat(50_000 + r.int(100_000))}`],
    [0.3, () => `Bearer ${right}, Bearer ${right}`],
  ]);
}

/** A Content-Type: mostly JSON, else JSON with odd parameters, other media types, noise, none. */
export function genContentType(r: Random): string | undefined {
  return r.weighted<string | undefined>([
    [2, () => undefined],
    [14, () => "application/json"],
    [
      3,
      () =>
        r.pick([
          "application/json; charset=utf-8",
          "application/json;charset=UTF-8",
          "APPLICATION/JSON",
          'Application/Json ; Charset="UTF-8"',
          "application/json; charset=latin1",
          "application/json; charset=utf-16",
          'application/json; charset="utf-\\8"',
          "application/json; charset=",
          'application/json; charset="unterminated',
          "application/json;;;",
          "application/json; foo=bar; charset=utf-8",
          'application/json; x="a;charset=latin1"',
          "application/json; charset=utf-8; charset=latin1",
          "application/json; charset",
          "application/json ;",
          " application/json",
        ]),
    ],
    [
      2,
      () =>
        r.pick([
          "text/plain",
          "text/json",
          "multipart/form-data; boundary=xyz",
          "application/x-www-form-urlencoded",
          "application/jsonx",
          "application/ld+json",
          "application/problem+json",
          "*/*",
          "",
          "json",
          "application/",
          "/json",
        ]),
    ],
    [1, () => r.latin1(r.int(60))],
  ]);
}

/** An Idempotency-Key: often none, a few repeating keys (so reuse happens), odd and over-long ones. */
export function genIdempotencyKey(r: Random): string | undefined {
  return r.weighted<string | undefined>([
    [6, () => undefined],
    [3, () => r.pick(["k1", "k2", "k3", "key-with-spaces inside"])],
    [1, () => r.string(1 + r.int(40), PRINTABLE)],
    [1, () => r.pick(["", "clé", "Ã©", "\u00ff\u00fe", "a\tb", "\u007f"])],
    [0.5, () => "k".repeat(r.pick([255, 256, 257, 10_000]))],
    [0.5, () => r.latin1(1 + r.int(300))],
  ]);
}

const GOOD_TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

/** A traceparent: mostly none, a valid one, or malformed and over-long ones. */
export function genTraceparent(r: Random): string | undefined {
  return r.weighted<string | undefined>([
    [6, () => undefined],
    [1, () => GOOD_TRACEPARENT],
    [
      2,
      () =>
        r.pick([
          GOOD_TRACEPARENT.toUpperCase(),
          "00-00000000000000000000000000000000-b7ad6b7169203331-01",
          "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
          "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
          `01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-${"ab".repeat(40)}`,
          `01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01${"x".repeat(10)}`,
          "00-xyz",
          "-",
          "00--b7ad6b7169203331-01",
          `${GOOD_TRACEPARENT}-extra`,
        ]),
    ],
    [1, () => r.latin1(r.int(80))],
    [0.3, () => "0".repeat(600 + r.int(5_000))],
  ]);
}

/** An X-Forwarded-For: mostly none, else addresses, chains, garbage and a very long chain. */
export function genForwardedFor(r: Random): string | undefined {
  return r.weighted<string | undefined>([
    [6, () => undefined],
    [
      2,
      () =>
        r.pick([
          "192.0.2.7",
          "192.0.2.7, 10.0.0.1",
          "::1, 10.0.0.2",
          "unknown",
          "[::1]:80",
          "1.2.3.4.5",
          "300.1.1.1",
          ",,,",
          "",
          "fe80::1%eth0",
          "::ffff:192.0.2.1",
          "10.0.0.1, 10.0.0.2, 10.0.0.3",
        ]),
    ],
    [1, () => r.latin1(r.int(100))],
    [0.3, () => Array.from({ length: 2_000 }, (_, index) => `10.0.${index % 256}.1`).join(", ")],
  ]);
}

/** The peer address the app sees (through x-fuzz-peer): trusted proxies, strangers, none, garbage. */
export function genPeer(r: Random): string | undefined {
  return r.pick([undefined, undefined, "192.0.2.1", "192.0.2.2", "198.51.100.9", "10.0.0.1", "::1", "not-an-address"]);
}
