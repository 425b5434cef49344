import { describe, expect, it } from "vitest";
import {
  bearerMatches,
  checkJsonContentType,
  parseJsonObject,
  tokenMatches,
  unauthorizedError,
} from "../../../src/core/http/request-checks.js";

const encode = (text: string) => new TextEncoder().encode(text);

describe("bearerMatches", () => {
  it("accepts the scheme in any case", () => {
    expect(bearerMatches("bearer s3cret", ["s3cret"])).toBe(true);
    expect(bearerMatches("BEARER s3cret", ["s3cret"])).toBe(true);
  });

  it.each([null, "", "Bearer", "Bearer ", "Basic s3cret", "Bearer s3cre", "Bearer s3cret2", "Bearer S3CRET"])(
    "rejects %j",
    (header) => {
      expect(bearerMatches(header, ["s3cret"])).toBe(false);
    },
  );

  it("accepts either of two secrets during a rotation, and nothing else", () => {
    expect(bearerMatches("Bearer new-secret", ["new-secret", "old-secret"])).toBe(true);
    expect(bearerMatches("Bearer old-secret", ["new-secret", "old-secret"])).toBe(true);
    expect(bearerMatches("Bearer other-secret", ["new-secret", "old-secret"])).toBe(false);
    expect(bearerMatches("Bearer new-secret old-secret", ["new-secret", "old-secret"])).toBe(false);
  });

  it("accepts nothing without a secret", () => {
    expect(bearerMatches("Bearer ", [])).toBe(false);
    expect(bearerMatches("Bearer x", [])).toBe(false);
  });

  it("compares tokens of different lengths without matching a prefix", () => {
    expect(tokenMatches("abc", "abcd")).toBe(false);
    expect(tokenMatches("abcd", "abc")).toBe(false);
    expect(tokenMatches("abc", "abc")).toBe(true);
  });

  it("refuses with a 401 that names no token", () => {
    const error = unauthorizedError();
    expect(error).toMatchObject({ code: "unauthorized", status: 401 });
    expect(error.message).not.toMatch(/s3cret/);
  });
});

describe("checkJsonContentType", () => {
  it.each([
    "application/json",
    "APPLICATION/JSON",
    "application/json; charset=utf-8",
    "application/json;charset=UTF-8",
    'application/json; charset="utf-8"',
    "application/json; boundary=x",
    'application/json; x="a;charset=latin1"',
    'application/json; x="a\\"b;charset=latin1"; charset=utf-8',
    "application/json; foo; charset=utf-8",
  ])("accepts %s", (type) => {
    expect(() => checkJsonContentType(type)).not.toThrow();
  });

  it.each([
    null,
    "",
    "text/plain",
    "application/json; charset=latin1",
    'application/json; x="a;b"; charset=latin1',
    "application/json; charset=",
    "application/jsonx",
    "application/x-www-form-urlencoded",
  ])("rejects %j with 415", (type) => {
    expect(() => checkJsonContentType(type)).toThrow(
      expect.objectContaining({ code: "unsupported_media_type", status: 415 }),
    );
  });
});

describe("parseJsonObject", () => {
  it("parses an object", () => {
    expect(parseJsonObject(encode('{"a":1}'))).toEqual({ a: 1 });
  });

  it.each(["[1,2]", "null", "3", '"x"', "{", ""])("rejects %j as invalid_json", (text) => {
    expect(() => parseJsonObject(encode(text))).toThrow(expect.objectContaining({ code: "invalid_json", status: 400 }));
  });

  it("says where the JSON breaks without repeating what was sent", () => {
    const sent = "password=hunter2&user=bob";
    let detail = "";
    try {
      parseJsonObject(encode(sent));
    } catch (error) {
      detail = error instanceof Error ? error.message : "";
    }
    expect(detail).toMatch(/^The body is not valid JSON/);
    expect(detail).not.toContain("password");
    expect(() => parseJsonObject(encode('{"a":'))).toThrow("The body is not valid JSON");
  });

  it("rejects bytes that are not UTF-8", () => {
    const bytes = new Uint8Array([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
    expect(() => parseJsonObject(bytes)).toThrow(expect.objectContaining({ code: "invalid_json" }));
  });
});
