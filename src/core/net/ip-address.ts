/** Bytes of an IP address: IPv6, and IPv4 in its IPv4-mapped form (`::ffff:a.b.c.d`). */
export type IpBytes = Uint8Array;

const IPV4_OCTET = /^(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const HEX_GROUP = /^[0-9A-Fa-f]{1,4}$/;

/**
 * Parses an IPv4 or IPv6 address into 16 bytes; undefined for anything else. IPv4 becomes its
 * IPv4-mapped IPv6 form, so `10.0.0.1` and `::ffff:10.0.0.1` (how a dual-stack socket reports
 * an IPv4 peer) are the same address. An IPv6 zone (`%eth0`) is dropped.
 */
export function parseIp(text: string): IpBytes | undefined {
  if (!text.includes(":")) {
    const ipv4 = parseIpv4(text);
    if (ipv4 === undefined) return undefined;
    const bytes = new Uint8Array(16);
    bytes[10] = 0xff;
    bytes[11] = 0xff;
    bytes.set(ipv4, 12);
    return bytes;
  }
  return parseIpv6(text);
}

/** True when the bytes are an IPv4 address (IPv4-mapped). */
export function isIpv4(bytes: IpBytes): boolean {
  for (let index = 0; index < 10; index += 1) if (bytes[index] !== 0) return false;
  return bytes[10] === 0xff && bytes[11] === 0xff;
}

/**
 * What one client controls, as a string: an IPv4 address itself (an IPv4-mapped one without
 * its `::ffff:` prefix), and for IPv6 its /64, since a single host is routinely given a whole
 * /64 and could otherwise take a fresh address for every request. Anything that does not parse
 * is returned as it is.
 */
export function addressGroup(address: string): string {
  // The common case needs no parsing: a dotted IPv4 address.
  if (!address.includes(":")) return address;
  const bytes = parseIpv6(address);
  if (bytes === undefined) return address;
  if (isIpv4(bytes)) return bytes.subarray(12).join(".");
  const groups: string[] = [];
  for (let index = 0; index < 8; index += 2)
    groups.push((((bytes[index] ?? 0) << 8) | (bytes[index + 1] ?? 0)).toString(16));
  return `${groups.join(":")}::/64`;
}

function parseIpv4(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((part) => IPV4_OCTET.test(part))) return undefined;
  return parts.map(Number);
}

function parseIpv6(input: string): IpBytes | undefined {
  const zone = input.indexOf("%");
  const text = zone === -1 ? input : input.slice(0, zone);
  const halves = text.split("::");
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0] ?? "", halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1] ?? "", true) : [];
  if (head === undefined || tail === undefined) return undefined;
  const missing = 8 - head.length - tail.length;
  // Without "::" there must be exactly eight groups; "::" stands for at least one.
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const bytes = new Uint8Array(16);
  groups.forEach((group, index) => {
    bytes[index * 2] = group >> 8;
    bytes[index * 2 + 1] = group & 0xff;
  });
  return bytes;
}

/** The 16-bit groups of one side of "::"; a dotted IPv4 address may end the last side. */
function groupsOf(side: string, mayEndInIpv4: boolean): number[] | undefined {
  if (side === "") return [];
  const parts = side.split(":");
  const groups: number[] = [];
  for (const [index, part] of parts.entries()) {
    if (mayEndInIpv4 && index === parts.length - 1 && part.includes(".")) {
      const ipv4 = parseIpv4(part);
      if (ipv4 === undefined) return undefined;
      const [a = 0, b = 0, c = 0, d = 0] = ipv4;
      groups.push((a << 8) | b, (c << 8) | d);
    } else if (HEX_GROUP.test(part)) groups.push(Number.parseInt(part, 16));
    else return undefined;
  }
  return groups;
}
