import type { Random } from "../../shared/seeded-random.js";
import { SECRET_MARK } from "./fuzz-secrets.js";
import { genOddString } from "./fuzz-values.js";

/** Host names that resolve to this machine: the only hosts a fuzzed URL may reach. */
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "localhost", "[::1]"]);

/**
 * A `--url` value of every shape, built from parts: schemes with and without `//` (and none),
 * credentials holding the planted secret, loopback hosts in several spellings, the port nothing
 * listens on (or one out of range), paths with trailing slashes, a token in the query or the
 * fragment, and blanks around it. Every value that is an http(s) URL reaches only the dead
 * loopback port (see {@link unsafeUrl}).
 */
export function genUrl(r: Random, deadPort: number): string {
  if (r.chance(0.1)) return genOddString(r);
  const scheme = r.weighted<string>([
    [8, () => "http://"],
    [2, () => "https://"],
    [1, () => "HTTP://"],
    [2, () => "http:"],
    [1, () => "http:/"],
    [1, () => "http:\\\\"],
    [1, () => "//"],
    [2, () => ""],
    [1, () => r.pick(["ftp://", "file://", "ws://", "postgres://", "javascript:", "hxxp://"])],
  ]);
  const credentials = r.weighted<string>([
    [5, () => ""],
    [4, () => `fuzz:${SECRET_MARK}@`],
    [1, () => `:${SECRET_MARK}@`],
    [1, () => `${SECRET_MARK}@`],
    [1, () => `fuzz:${SECRET_MARK}-${"p".repeat(r.int(40))}@`],
    [1, () => "fuzz@"],
  ]);
  const host = r.weighted<string>([
    [6, () => "127.0.0.1"],
    [2, () => "localhost"],
    [1, () => "LOCALHOST"],
    [1, () => "[::1]"],
    [1, () => "127.1"],
    [1, () => "0x7f000001"],
    [0.5, () => ""],
  ]);
  const port = r.weighted<string>([
    [10, () => `:${deadPort}`],
    [1, () => ":0"],
    [1, () => r.pick([":65536", ":99999", ":-1", ":abc", `:${deadPort}0`])],
  ]);
  const path = r.weighted<string>([
    [5, () => ""],
    [3, () => "/"],
    [2, () => "//"],
    [1, () => "///"],
    [1, () => "/base"],
    [1, () => "/base//"],
    [1, () => r.pick(["/a b", "/é中😀", "/%zz", "/admin/", "/../..", "/a?b"])],
  ]);
  const query = r.weighted<string>([
    [6, () => ""],
    [2, () => `?token=${SECRET_MARK}`],
    [1, () => "?x=1"],
    [1, () => `?${SECRET_MARK}`],
  ]);
  const fragment = r.chance(0.1) ? `#${SECRET_MARK}` : "";
  const blank = (): string => (r.chance(0.08) ? r.pick([" ", "\t", "\n", "  "]) : "");
  const url = `${blank()}${scheme}${credentials}${host}${port}${path}${query}${fragment}${blank()}`;
  return r.chance(0.02) ? `${url}${"a".repeat(50_000)}` : url;
}

/**
 * Why running a word would call something other than the dead loopback port (a URL that
 * parses to another host or port), or undefined. Each word is tried whole and after its
 * first `=` (`--url=<value>`); a case with such a word is not run.
 */
export function unsafeUrl(words: readonly string[], deadPort: number): string | undefined {
  for (const word of words) {
    const at = word.indexOf("=");
    for (const candidate of at === -1 ? [word] : [word, word.slice(at + 1)]) {
      if (!URL.canParse(candidate)) continue;
      const { protocol, hostname, port } = new URL(candidate);
      if (protocol !== "http:" && protocol !== "https:") continue;
      if (!LOOPBACK_HOSTS.has(hostname) || (port !== String(deadPort) && port !== "0")) {
        return `${JSON.stringify(candidate.slice(0, 200))} would reach ${hostname}:${port || "(default port)"}`;
      }
    }
  }
  return undefined;
}
