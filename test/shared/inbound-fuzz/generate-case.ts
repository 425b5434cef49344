import type { Random } from "../seeded-random.js";
import { TOKEN_CHARS } from "./alphabets.js";
import type { FuzzCase, QueueMode, World } from "./fuzz-case.js";
import type { FuzzTargets } from "./fuzz-fixture.js";
import { genBody, genReplayBody } from "./generate-body.js";
import {
  genAuthorization,
  genContentType,
  genForwardedFor,
  genIdempotencyKey,
  genPeer,
  genTraceparent,
} from "./generate-headers.js";
import { HOOKS_KEYS, WEBHOOK_KEYS } from "./generate-json.js";
import { genPath } from "./generate-path.js";

function genMethod(r: Random): string {
  return r.weighted<string>([
    [10, () => "POST"],
    [3, () => "GET"],
    [1, () => "HEAD"],
    [1, () => "PUT"],
    [1, () => "DELETE"],
    [1, () => "PATCH"],
    [1, () => "OPTIONS"],
    [0.5, () => r.pick(["post", "get", "delete", "M-SEARCH", "PROPFIND", "QUERY", "FOO", "PoSt", "a!#$%&*+.^_`|~"])],
    [0.5, () => r.string(1 + r.int(20), TOKEN_CHARS)],
  ]);
}

/** The surroundings for one request: mostly running with a working queue, sometimes not. */
export function genWorld(r: Random): World {
  return {
    shuttingDown: r.chance(0.03),
    queueMode: r.weighted<QueueMode>([
      [20, () => "sync"],
      [4, () => "async"],
      [1, () => "full"],
      [1, () => "throw"],
      [1, () => "reject"],
      [1, () => "reject-full"],
      [1, () => "state-down"],
      [1, () => "commits-behind"],
    ]),
    restoreOk: r.chance(0.7),
  };
}

/** Methods the Fetch standard normalizes to upper case (a client sends `get` as `GET`). */
const NORMALIZED_METHODS: ReadonlySet<string> = new Set(["DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT"]);

/** Request number `index`: path, method, headers, body and world, all drawn from `r` in a fixed order. */
export function genCase(r: Random, f: FuzzTargets, index: number): FuzzCase {
  const path = genPath(r, f);
  // Mostly the method a path answers, so that the checks behind the method are reached.
  const usual = path.startsWith("/admin") ? (path.includes("replay") ? "POST" : "GET") : "POST";
  const drawn = r.chance(0.75) ? usual : genMethod(r);
  const method = NORMALIZED_METHODS.has(drawn.toUpperCase()) ? drawn.toUpperCase() : drawn;
  const headers: [string, string][] = [];
  const set = (name: string, value: string | undefined) => {
    if (value !== undefined) headers.push([name, value]);
  };
  set("authorization", genAuthorization(r, path));
  set("content-type", genContentType(r));
  set("idempotency-key", genIdempotencyKey(r));
  set("traceparent", genTraceparent(r));
  if (r.chance(0.1)) set("tracestate", r.chance(0.8) ? r.latin1(r.int(100)) : "a=b,".repeat(3_000));
  if (r.chance(0.05))
    set("content-encoding", r.pick(["gzip", "identity", "", ", identity", "br, identity", "IDENTITY", "x"]));
  if (r.chance(0.05))
    set("content-length", r.pick(["abc", "-1", "0", "1e9", "99999999999", "2000000", "1048577", " 12 ", "0x10"]));
  set("x-forwarded-for", genForwardedFor(r));
  set("x-fuzz-peer", genPeer(r));
  if (r.chance(0.03)) set("expect", r.pick(["100-continue", "garbage"]));
  let body: string | Uint8Array | undefined;
  let kind = "no-body";
  if (method !== "GET" && method !== "HEAD" && r.chance(0.95)) {
    const made = path.startsWith("/admin/dead-letters/replay")
      ? genReplayBody(r, f)
      : genBody(r, path.startsWith("/hooks") ? HOOKS_KEYS : WEBHOOK_KEYS);
    body = made.body;
    kind = made.kind;
  }
  return { index, method, path, headers, body, kind, world: genWorld(r) };
}
