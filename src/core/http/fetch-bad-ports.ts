/**
 * The Fetch standard's "bad ports" (https://fetch.spec.whatwg.org/#bad-port): `fetch` refuses to
 * connect to one before trying, on Node (undici) as in browsers. The list ends with the
 * standard's latest addition, the port that means "any": where a runtime does not refuse it
 * yet, no server is reached there either.
 */
export const FETCH_BAD_PORTS: readonly number[] = [
  1, 7, 9, 11, 13, 15, 17, 19, 20, 21, 22, 23, 25, 37, 42, 43, 53, 69, 77, 79, 87, 95, 101, 102, 103, 104, 109, 110,
  111, 113, 115, 117, 119, 123, 135, 137, 139, 143, 161, 179, 389, 427, 465, 512, 513, 514, 515, 526, 530, 531, 532,
  540, 548, 554, 556, 563, 587, 601, 636, 989, 990, 993, 995, 1719, 1720, 1723, 2049, 3659, 4045, 4190, 5060, 5061,
  6000, 6566, 6665, 6666, 6667, 6668, 6669, 6679, 6697, 10080, 0,
];

/** The bad ports as a URL's `port` writes them. */
const BAD_PORTS: ReadonlySet<string> = new Set(FETCH_BAD_PORTS.map(String));

/**
 * The port of an http(s) `url` that `fetch` refuses, as written in the URL; undefined when it
 * has none (a default port included), or `url` is not an http(s) URL.
 */
export function fetchBadPort(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const { protocol, port } = new URL(url);
  if (protocol !== "http:" && protocol !== "https:") return undefined;
  return BAD_PORTS.has(port) ? port : undefined;
}
