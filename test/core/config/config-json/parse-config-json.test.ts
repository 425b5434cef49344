/**
 * A configuration's text read as JSON, on Node (the file, `config check`) and Workers
 * (`CONFIG_JSON`): a byte-order mark is skipped, a syntax error says where, a comment is named
 * as such, and a key written twice is a problem with its path rather than a value lost.
 */
import { describe, expect, it } from "vitest";
import { parseConfigJson } from "../../../../src/core/config/config-json/parse-config-json.js";

const parse = (text: string) => parseConfigJson(text, "config.json", "correct the JSON syntax");

describe("parseConfigJson", () => {
  it("skips a byte-order mark an editor wrote first", () => {
    expect(parse('\uFEFF{"routes":[]}')).toEqual({ ok: true, document: { routes: [] } });
  });

  it("says on which line and column the syntax breaks", () => {
    const result = parse('{\n  "routes": [],\n  "brains": {,}\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.message).toMatch(/^config\.json is not valid JSON: .*\(line 3, column 14\)$/);
  });

  it.each([
    ["where a key goes", '{\n  // the routes\n  "routes": []\n}', "line 2, column 3"],
    ["before everything", '// webhook-channel\n{"routes": []}', "line 1, column 1"],
    ["in a value", '{"routes": // none\n []}', "line 1, column 12"],
    ["after a string holding a slash", '{"a": "x//y",\r\n /* b */ "routes": []}', "line 2, column 2"],
  ])("names a comment %s as what JSON does not have, with its place", (_, text, where) => {
    const result = parse(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.message).toContain(`(${where}): JSON has no comments; remove them`);
  });

  it("places an unexpected character the parser quotes without a position", () => {
    const result = parse('{\n  "a": [1, 2,]\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.message).toContain("(line 2, column 14)");
  });

  it("says where a secret pasted unquoted breaks the syntax without quoting any of it", () => {
    const secret = "sk_live_9f8e7d6c5b4a3f2e1d0cAbCdEf";
    const result = parse(`{\n  "channels": [{ "type": "webhook", "token_env": ${secret} }]\n}\n`);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.message).toBe("config.json is not valid JSON: Unexpected token 's' (line 2, column 50)");
  });

  it("places the end of a file cut short, as a half-saved edit leaves it, and says what is missing", () => {
    const result = parse('{\n  "log_level": "info",\n  "channels": [\n\n');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.message).toBe(
      "config.json is not valid JSON: it ends before its JSON does (line 3, column 16): a bracket, brace or quote is not closed",
    );
  });

  it("says a file with nothing in it is empty", () => {
    const result = parse(" \n");
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.message).toBe("config.json is not valid JSON: it is empty");
  });

  it.each([
    ['{"log_level":"info","log_level":"debug"}', "log_level"],
    ['{"channels":[{"webhook":{"bind":"a"}},{"webhook":{"bind":"b","bind":"c"}}]}', "channels[1].webhook.bind"],
    ['{"brains":{"a b":{"type":"echo"},"a b":{}}}', 'brains["a b"]'],
    ['{"x":{"k\\"q":1,"k\\"q":2}}', 'x["k\\"q"]'],
  ])("refuses %s: a key written twice, with its path", (text, path) => {
    const result = parse(text);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem).toMatchObject({ path, message: expect.stringContaining("is written twice in one object") });
  });

  it("takes one key in two objects, and keys that only look alike", () => {
    expect(parse('{"a":{"k":1},"b":{"k":2},"c":[{"k":1},{"k":2}],"d":{"k":"k","K":1,"k ":2}}').ok).toBe(true);
  });
});
