import { describe, expect, it } from "vitest";
import { createCidrMatcher } from "../../../src/core/net/cidr.js";
import { resolveClientAddress } from "../../../src/core/net/client-address.js";

const trusted = createCidrMatcher(["127.0.0.1/32", "10.0.0.0/8", "::1"]);
const none = createCidrMatcher([]);

describe("resolveClientAddress", () => {
  it("is the peer when no proxy is trusted, whatever X-Forwarded-For claims", () => {
    expect(resolveClientAddress("203.0.113.9", "198.51.100.1", none)).toBe("203.0.113.9");
    expect(resolveClientAddress("127.0.0.1", "198.51.100.1", none)).toBe("127.0.0.1");
  });

  it("is the peer when the peer is not a trusted proxy", () => {
    expect(resolveClientAddress("203.0.113.9", "198.51.100.1", trusted)).toBe("203.0.113.9");
  });

  it("is the peer when a trusted proxy sends no X-Forwarded-For", () => {
    expect(resolveClientAddress("127.0.0.1", null, trusted)).toBe("127.0.0.1");
    expect(resolveClientAddress("127.0.0.1", "", trusted)).toBe("127.0.0.1");
  });

  it("is the right-most X-Forwarded-For entry that is not a trusted proxy", () => {
    expect(resolveClientAddress("127.0.0.1", "198.51.100.1", trusted)).toBe("198.51.100.1");
    expect(resolveClientAddress("127.0.0.1", "198.51.100.1, 10.0.0.5", trusted)).toBe("198.51.100.1");
    expect(resolveClientAddress("10.1.1.1", "198.51.100.1,10.0.0.5 , 127.0.0.1", trusted)).toBe("198.51.100.1");
  });

  it("never believes what the client itself put left of it", () => {
    // The client sent "X-Forwarded-For: 192.0.2.66"; the proxy appended the real peer.
    expect(resolveClientAddress("127.0.0.1", "192.0.2.66, 198.51.100.1", trusted)).toBe("198.51.100.1");
  });

  it("is the left-most entry when every entry is a trusted proxy", () => {
    expect(resolveClientAddress("127.0.0.1", "10.0.0.7, 10.0.0.5", trusted)).toBe("10.0.0.7");
  });

  it("skips empty entries", () => {
    expect(resolveClientAddress("127.0.0.1", "198.51.100.1, , ", trusted)).toBe("198.51.100.1");
  });

  it("drops the port some proxies add", () => {
    expect(resolveClientAddress("127.0.0.1", "198.51.100.1:5123", trusted)).toBe("198.51.100.1");
    expect(resolveClientAddress("127.0.0.1", "[2001:db8::7]:443", trusted)).toBe("2001:db8::7");
    expect(resolveClientAddress("127.0.0.1", "[2001:db8::7]", trusted)).toBe("2001:db8::7");
    expect(resolveClientAddress("127.0.0.1", "2001:db8::7", trusted)).toBe("2001:db8::7");
  });

  it("takes an entry that is no address as the client: it is not a trusted proxy", () => {
    expect(resolveClientAddress("127.0.0.1", "198.51.100.1, unknown", trusted)).toBe("unknown");
  });

  it("recognizes a trusted IPv4 peer in its IPv4-mapped IPv6 form", () => {
    expect(resolveClientAddress("::ffff:127.0.0.1", "198.51.100.1", trusted)).toBe("198.51.100.1");
  });

  it("is null when the peer is unknown", () => {
    expect(resolveClientAddress(null, "198.51.100.1", trusted)).toBeNull();
  });
});
