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
    // Node 20 names a position, which becomes a line and a column; later versions name them.
    expect(result.problem.message).toMatch(/^config\.json is not valid JSON: .*\(line 3,? column 14\)/);
  });

  it("names a comment as what JSON does not have", () => {
    const result = parse('{\n  // the routes\n  "routes": []\n}');
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problem.message).toMatch(/\(line 2,? column 3\).*: JSON has no comments; remove them$/);
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
