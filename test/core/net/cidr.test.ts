import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { createCidrMatcher, parseCidr } from "../../../src/core/net/cidr.js";
import { addressGroup, parseIp } from "../../../src/core/net/ip-address.js";
import { configDocument } from "../../support/configs.js";

describe("parseIp", () => {
  it.each([
    "0.0.0.0",
    "127.0.0.1",
    "255.255.255.255",
    "::",
    "::1",
    "2001:db8::1",
    "2001:DB8:0:0:8:800:200C:417A",
    "1:2:3:4:5:6:7:8",
    "1::8",
    "1:2:3:4:5:6:7::",
    "::ffff:192.0.2.1",
    "64:ff9b::192.0.2.33",
    "fe80::1%eth0",
  ])("parses %s", (text) => {
    expect(parseIp(text)).toBeInstanceOf(Uint8Array);
  });

  it.each([
    "",
    "1.2.3",
    "1.2.3.4.5",
    "256.1.1.1",
    "01.2.3.4",
    "1.2.3.-4",
    " 1.2.3.4",
    "1.2.3.4:80",
    ":::",
    "1:::2",
    "1::2::3",
    "1:2:3:4:5:6:7:8:9",
    "1:2:3:4:5:6:7",
    "1:2:3:4:5:6:7:8::",
    "12345::",
    "g::1",
    "::1.2.3",
    "::1.2.3.4:5",
    "unknown",
  ])("refuses %j", (text) => {
    expect(parseIp(text)).toBeUndefined();
  });

  it("reads an IPv4 address and its IPv4-mapped IPv6 form as the same address", () => {
    expect(parseIp("192.0.2.1")).toEqual(parseIp("::ffff:192.0.2.1"));
    expect(parseIp("::ffff:c000:201")).toEqual(parseIp("192.0.2.1"));
  });

  it("reads every spelling of one IPv6 address alike", () => {
    const one = parseIp("2001:db8::1");
    expect(parseIp("2001:0db8:0000:0000:0000:0000:0000:0001")).toEqual(one);
    expect(parseIp("2001:DB8:0::0:1")).toEqual(one);
  });
});

describe("addressGroup", () => {
  it("keeps an IPv4 address, without the prefix a dual-stack socket adds", () => {
    expect(addressGroup("203.0.113.7")).toBe("203.0.113.7");
    expect(addressGroup("::ffff:203.0.113.7")).toBe("203.0.113.7");
  });

  it("takes an IPv6 address by its /64, one host's usual allocation", () => {
    expect(addressGroup("2001:db8:1:2:aaaa::1")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("2001:0DB8:0001:0002:ffff:ffff:ffff:ffff")).toBe("2001:db8:1:2::/64");
    expect(addressGroup("::1")).toBe("0:0:0:0::/64");
  });

  it("returns what does not parse as it is", () => {
    expect(addressGroup("not-an-address")).toBe("not-an-address");
    expect(addressGroup("zz::1")).toBe("zz::1");
  });
});

describe("parseCidr", () => {
  it.each([
    ["127.0.0.1", 128],
    ["127.0.0.1/32", 128],
    ["10.0.0.0/8", 104],
    ["0.0.0.0/0", 96],
    ["::1", 128],
    ["::1/128", 128],
    ["2001:db8::/32", 32],
    ["::/0", 0],
  ])("parses %s", (text, bits) => {
    expect(parseCidr(text)?.bits).toBe(bits);
  });

  it.each(["", "10.0.0.0/33", "::/129", "10.0.0.0/", "10.0.0.0/8/8", "10.0.0.0/-1", "10.0.0.0/ 8", "10.0.0/8", "x/8"])(
    "refuses %j",
    (text) => {
      expect(parseCidr(text)).toBeUndefined();
    },
  );
});

describe("createCidrMatcher", () => {
  const matches = createCidrMatcher(["127.0.0.1/32", "10.0.0.0/8", "172.16.0.0/12", "2001:db8::/48", "fd00::1"]);

  it.each([
    "127.0.0.1",
    "::ffff:127.0.0.1",
    "10.0.0.0",
    "10.255.255.255",
    "172.16.0.1",
    "172.31.255.255",
    "2001:db8::1",
    "2001:db8:0:ffff::1",
    "fd00::1",
  ])("matches %s", (address) => {
    expect(matches(address)).toBe(true);
  });

  it.each([
    "127.0.0.2",
    "11.0.0.0",
    "9.255.255.255",
    "172.15.255.255",
    "172.32.0.0",
    "2001:db8:1::1",
    "2001:db9::1",
    "fd00::2",
    "::1",
    "::7f00:1",
    "not an address",
    "",
  ])("does not match %j", (address) => {
    expect(matches(address)).toBe(false);
  });

  it("keeps IPv4 blocks to IPv4 addresses", () => {
    expect(createCidrMatcher(["0.0.0.0/0"])("::1")).toBe(false);
    expect(createCidrMatcher(["0.0.0.0/0"])("198.51.100.1")).toBe(true);
    expect(createCidrMatcher(["::/0"])("198.51.100.1")).toBe(true);
  });

  it("ignores host bits in a block", () => {
    expect(createCidrMatcher(["10.1.2.3/8"])("10.200.0.1")).toBe(true);
  });

  it("matches nothing without blocks", () => {
    expect(createCidrMatcher([])("127.0.0.1")).toBe(false);
  });
});

describe("webhook.trusted_proxies in the configuration", () => {
  it("takes addresses and blocks of both families, and defaults to none", () => {
    const result = validateConfig(configDocument({ trusted_proxies: ["127.0.0.1", "10.0.0.0/8", "::1/128"] }));
    expect(result.ok && result.config.channels[0]?.webhook.trusted_proxies).toEqual([
      "127.0.0.1",
      "10.0.0.0/8",
      "::1/128",
    ]);
    const plain = validateConfig(configDocument());
    expect(plain.ok && plain.config.channels[0]?.webhook.trusted_proxies).toEqual([]);
  });

  it("refuses an entry that is not an address or block, naming it", () => {
    const result = validateConfig(configDocument({ trusted_proxies: ["127.0.0.1", "10.0.0.0/33"] }));
    expect(result.ok).toBe(false);
    expect(!result.ok && result.problems).toContainEqual(
      expect.objectContaining({
        path: "channels[0].webhook.trusted_proxies[1]",
        message: expect.stringContaining("CIDR"),
      }),
    );
  });
});
