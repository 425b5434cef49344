/**
 * A required key with a typo: one problem with the key it was meant to be, not "is required"
 * beside "unknown key".
 */
import { describe, expect, it } from "vitest";
import { webhookProblemsOf as problemsOf } from "./validate-config-problems.js";

describe("a misspelled required key", () => {
  it.each(["outbound_ulr", "outbund_url", "Outbound_url"])("says %s was meant to be outbound_url", (typo) => {
    expect(problemsOf({ [typo]: "http://127.0.0.1:8091/replies" })).toEqual([
      {
        path: `channels[0].webhook.${typo}`,
        message: `unknown key "${typo}", likely a typo of "outbound_url", which is required`,
        fix: 'rename it to "outbound_url"',
      },
    ]);
  });

  it("keeps both problems when the unknown key is not close to the missing one", () => {
    const messages = problemsOf({ reply_to: "http://127.0.0.1:8091/replies" }).map((problem) => problem.message);
    expect(messages).toEqual(expect.arrayContaining(["is required", 'unknown key "reply_to"']));
  });
});
