/**
 * The names under `brains` that no definition may take: each is refused with its path and the
 * fix, rather than quietly replacing the built-in brain or vanishing.
 */
import { describe, expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";

function withBrains(brains: Record<string, unknown>, brain = "echo") {
  return {
    channels: [{ type: "webhook", token_env: "T", webhook: { outbound_url: "http://127.0.0.1:8091/r" } }],
    routes: [{ channel: "webhook", brain }],
    brains,
  };
}

const HTTP_BRAIN = { type: "http", url: "http://127.0.0.1:8092/bot" };

describe("brain names", () => {
  it.each([
    ["the built-in echo", "echo", "brains.echo", '"echo" is the built-in brain\'s name'],
    ["an empty name", "", 'brains[""]', "a brain's name is empty"],
    ["a name with U+0000", "bot\u0000", 'brains["bot\\u0000"]', "holds a control character"],
  ])("refuses %s, naming the path", (_, name, path, message) => {
    const result = validateConfig(withBrains({ [name]: HTTP_BRAIN }));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toContainEqual(
      expect.objectContaining({
        path,
        message: expect.stringContaining(message),
      }),
    );
  });

  it("refuses __proto__ where it is defined, not at the route that names it", () => {
    const document = JSON.parse(
      '{"channels":[{"type":"webhook","token_env":"T","webhook":{"outbound_url":"http://127.0.0.1:8091/r"}}],"routes":[{"channel":"webhook","brain":"__proto__"}],"brains":{"__proto__":{"type":"http","url":"http://127.0.0.1:8092/bot"}}}',
    ) as unknown;
    const result = validateConfig(document);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems[0]).toMatchObject({ message: '"__proto__" cannot name a brain' });
  });

  it("refuses a channel name with a control character, which Postgres cannot store", () => {
    const document = withBrains({});
    const channel = { ...document.channels[0], name: "web\u0000hook" };
    const result = validateConfig({
      ...document,
      channels: [channel],
      routes: [{ channel: "web\u0000hook", brain: "echo" }],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toContainEqual(
      expect.objectContaining({ path: "channels[0].name", message: expect.stringContaining("control character") }),
    );
  });

  it("takes any other name", () => {
    expect(validateConfig(withBrains({ "echo-2": HTTP_BRAIN }, "echo-2")).ok).toBe(true);
  });
});
