import { describe, expect, it } from "vitest";
import { bindKey, isLoopbackHost, parseBind } from "../../../src/core/config/bind-address.js";

// A bind is read the way the URL parser reads a host, so that every spelling of one address is
// one address: the same socket, the same loopback verdict, the same overlaps.

describe("parseBind", () => {
  it.each([
    ["127.0.0.1:8090", "127.0.0.1", 8090],
    ["127.1:8090", "127.0.0.1", 8090],
    ["0x7f.0.0.1:8090", "127.0.0.1", 8090],
    ["2130706433:8090", "127.0.0.1", 8090],
    ["0:8090", "0.0.0.0", 8090],
    ["[::1]:8090", "::1", 8090],
    ["[0:0:0:0:0:0:0:1]:8090", "::1", 8090],
    ["[0::0]:0", "::", 0],
    ["[FE80::A]:1", "fe80::a", 1],
    ["[::ffff:127.0.0.1]:8090", "127.0.0.1", 8090],
    ["localhost:8090", "localhost", 8090],
    ["Example.Internal:80", "example.internal", 80],
  ])("reads %s as host %s, port %i", (text, host, port) => {
    expect(parseBind(text)).toEqual({ host, port });
  });

  it.each(["[:::1]:8090", "[127.0.0.1]:8090", "[1::2::3]:8090", "1.2.3.256:8090", "127.0.0.1:65536", "host"])(
    "refuses %s",
    (text) => {
      expect(parseBind(text)).toBeUndefined();
    },
  );
});

describe("bindKey", () => {
  it.each([
    ["127.0.0.1:8090", "127.1:8090", "localhost:8090", "LOCALHOST:8090", "[::ffff:7f00:1]:8090"],
    ["[::1]:8090", "[0:0:0:0:0:0:0:1]:8090", "[::0:1]:8090"],
    ["0.0.0.0:8090", "0:8090", "0.0.0:8090"],
  ])("is one key for every spelling of %s", (...spellings) => {
    expect(new Set(spellings.map(bindKey)).size).toBe(1);
  });

  it("tells ports and addresses apart", () => {
    expect(bindKey("127.0.0.1:8090")).not.toBe(bindKey("127.0.0.1:8091"));
    expect(bindKey("127.0.0.1:8090")).not.toBe(bindKey("127.0.0.2:8090"));
    expect(bindKey("[::1]:8090")).not.toBe(bindKey("127.0.0.1:8090"));
  });
});

describe("isLoopbackHost", () => {
  it.each([
    "127.0.0.1",
    "127.1",
    "127.255.255.254",
    "0x7f.0.0.1",
    "2130706433",
    "localhost",
    "::1",
    "0:0:0:0:0:0:0:1",
    "::ffff:127.0.0.1",
  ])("is true for %s", (host) => {
    expect(isLoopbackHost(host)).toBe(true);
  });

  it.each(["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "::2", "example.internal", "127.0.0.1.example"])(
    "is false for %s",
    (host) => {
      expect(isLoopbackHost(host)).toBe(false);
    },
  );
});
