import { describe, expect, it } from "vitest";
import { isChannelError } from "../../../src/core/channel-error.js";
import { parseInboundSecrets } from "../../../src/core/config/inbound-secrets.js";
import { preflight } from "../../../src/core/config/preflight/preflight.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";
import { configDocument } from "../../support/configs.js";

describe("parseInboundSecrets", () => {
  it("takes one secret", () => {
    expect(parseInboundSecrets("s3cret-value", "WEBHOOK_SECRET")).toEqual(["s3cret-value"]);
  });

  it("takes two separated by one space, the new and the old of a rotation", () => {
    expect(parseInboundSecrets("new-secret old-secret", "WEBHOOK_SECRET")).toEqual(["new-secret", "old-secret"]);
  });

  it.each([
    ["three parts", "k3y-a k3y-b k3y-c", "3 space-separated parts"],
    ["a leading space", " k3y-a", "empty part"],
    ["a trailing space", "k3y-a ", "empty part"],
    ["a double space", "k3y-a  k3y-b", "empty part"],
    ["nothing", "", "is empty"],
    ["a trailing newline", "k3y-a\n", "a trailing newline?"],
    ["a tab between two", "k3y-a\tk3y-b", "whitespace"],
    ["a character beyond Latin-1", "k3y-✓", "beyond ASCII"],
    [
      "a Latin-1 character, which runtimes read differently",
      "k3y-\u00e9",
      "make a new secret with `webhook-channel secret`",
    ],
  ])("refuses %s as config_invalid naming the variable, never the value", (_what, value, reason) => {
    const result = parseInboundSecrets(value, "WEBHOOK_SECRET");
    expect(isChannelError(result)).toBe(true);
    if (!isChannelError(result)) return;
    expect(result).toMatchObject({ code: "config_invalid", variable: "WEBHOOK_SECRET" });
    expect(result.message).toMatch(/^environment variable WEBHOOK_SECRET /);
    expect(result.message).toContain(reason);
    for (const part of value.split(/\s+/).filter((part) => part.length > 0)) expect(result.message).not.toContain(part);
  });
});

describe("preflight of a channel's inbound secret", () => {
  const result = validateConfig(configDocument());
  if (!result.ok) throw new Error(JSON.stringify(result.problems));
  const { config } = result;

  it("passes two secrets separated by one space", () => {
    expect(preflight(config, () => "new-secret old-secret")).toEqual([]);
  });

  it("names the variable of a value with three secrets, with the fix", () => {
    const problems = preflight(config, () => "one-secret two-secret three-secret");
    expect(problems).toEqual([
      {
        path: "channels[0].token_env",
        message: expect.stringContaining("environment variable WEBHOOK_SECRET holds 3 space-separated parts"),
        fix: expect.stringContaining("separated by one space"),
      },
    ]);
    expect(JSON.stringify(problems)).not.toContain("one-secret");
  });

  it("names the variable of a value with a double space", () => {
    expect(preflight(config, () => "new-secret  old-secret")).toMatchObject([
      { path: "channels[0].token_env", message: expect.stringContaining("empty part") },
    ]);
  });
});
