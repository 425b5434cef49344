/**
 * A key whose value the schema fixes (a channel's `type`) left out: "is required", with the key to
 * add and what it must be, as for any other missing key, not "found undefined".
 */
import { expect, it } from "vitest";
import { validateConfig } from "../../../src/core/config/validate-config.js";

it("says a channel without its type is missing it, and what to add", () => {
  const result = validateConfig({
    channels: [{ token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:8091/replies" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
  expect(result.ok).toBe(false);
  if (result.ok) return;
  expect(result.problems).toEqual([
    {
      path: "channels[0].type",
      message: "is required",
      fix: expect.stringMatching(/^add "type" \(.*"webhook".*\)$/),
    },
  ]);
  for (const problem of result.problems) expect(`${problem.message} ${problem.fix}`).not.toContain("undefined");
});
