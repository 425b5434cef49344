import { describe, expect, it } from "vitest";
import { printable, printableJson } from "../../src/cli/printable-text.js";

const HOSTILE = "a\u009b2J\u001b[31mb\u009d0;title\u009c \u202egnp.exe\u2066x\u2069";

describe("text from clients, shown in a terminal", () => {
  it("escapes C0 and C1 controls and bidirectional overrides in a line", () => {
    expect(printable(HOSTILE)).toBe("a\\u009b2J\\u001b[31mb\\u009d0;title\\u009c \\u202egnp.exe\\u2066x\\u2069");
  });

  it("escapes them in indented JSON too, which stays the same value and keeps its line breaks", () => {
    const shown = printableJson({ text: HOSTILE, n: 1 }, 2);
    const acted = [...shown].filter(
      (char) => /[\u0080-\u009f\u202a-\u202e\u2066-\u2069]/.test(char) || char === "\u001b",
    );
    expect(acted).toEqual([]);
    expect(shown.split("\n")).toHaveLength(4);
    expect(JSON.parse(shown)).toEqual({ text: HOSTILE, n: 1 });
  });
});
