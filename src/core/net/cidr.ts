import { type IpBytes, parseIp } from "./ip-address.js";

/** A block of addresses: the first `bits` bits of `bytes` (IPv4 blocks in IPv4-mapped form). */
export interface Cidr {
  readonly bytes: IpBytes;
  readonly bits: number;
}

/**
 * Parses `address/prefix` (IPv4 prefix 0 to 32, IPv6 0 to 128) or a bare address (one host);
 * undefined when it is neither. Host bits may be set (`10.1.2.3/8` is `10.0.0.0/8`).
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  const address = slash === -1 ? text : text.slice(0, slash);
  const bytes = parseIp(address);
  if (bytes === undefined) return undefined;
  const ipv4 = !address.includes(":");
  const width = ipv4 ? 32 : 128;
  let bits = width;
  if (slash !== -1) {
    const prefix = text.slice(slash + 1);
    if (!/^\d{1,3}$/.test(prefix) || Number(prefix) > width) return undefined;
    bits = Number(prefix);
  }
  // An IPv4 block is matched against the IPv4-mapped range, the first 96 bits fixed.
  return { bytes, bits: ipv4 ? 96 + bits : bits };
}

/** True when `bytes` lies in `cidr`. */
export function cidrContains(cidr: Cidr, bytes: IpBytes): boolean {
  const whole = cidr.bits >> 3;
  for (let index = 0; index < whole; index += 1) if (cidr.bytes[index] !== bytes[index]) return false;
  const rest = cidr.bits & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((cidr.bytes[whole] ?? 0) & mask) === ((bytes[whole] ?? 0) & mask);
}

/**
 * A test of membership in any of `cidrs`, written in pure TypeScript so that the core runs
 * the same on Node and Workers. Anything that is not an address is in none of them. Throws on
 * a block that does not parse: the configuration schema has refused those already.
 */
export function createCidrMatcher(cidrs: readonly string[]): (address: string) => boolean {
  const blocks = cidrs.map((text) => {
    const cidr = parseCidr(text);
    if (cidr === undefined) throw new Error(`not an address or CIDR block: ${text}`);
    return cidr;
  });
  if (blocks.length === 0) return () => false;
  return (address) => {
    const bytes = parseIp(address);
    return bytes !== undefined && blocks.some((block) => cidrContains(block, bytes));
  };
}
