/**
 * A secret written where a variable's name goes (`token_env`, `api_key_env`, …): refused without
 * the value in the problem, which would carry the secret into every log and terminal it reaches.
 */
import { describe, expect, it } from "vitest";
import { looksLikeSecret } from "../../../src/core/config/schema-parts.js";
import { validateConfig } from "../../../src/core/config/validate-config.js";

const SECRET = "AL7pnhXb5bQk9ZtR2mWgWmSg";

describe("a secret where a variable's name goes", () => {
  it("is refused with the fix, and never echoed", () => {
    const result = validateConfig({
      channels: [{ type: "webhook", token_env: SECRET, webhook: { outbound_url: "http://127.0.0.1:8091/replies" } }],
      routes: [{ channel: "webhook", brain: "echo" }],
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      expect.objectContaining({
        path: "channels[0].token_env",
        message: expect.stringContaining("looks like a secret itself (not shown)"),
        fix: expect.stringContaining("make a new one"),
      }),
    ]);
    expect(JSON.stringify(result.problems)).not.toContain(SECRET);
  });

  it.each([SECRET, "d74c81dc5a0f4e6b9c3d2e1f0a9b8c7d", "D74C81DC5A0F4E6B9C3D2E1F"])("takes %s as a secret", (value) => {
    expect(looksLikeSecret(value)).toBe(true);
  });

  it.each([
    "WEBHOOK_SECRET",
    "OPENAI_API_KEY",
    "webhook_secret",
    "Bot2Token",
    "MY_SERVICE_V2_SIGNING_KEY_2026",
    "DEADBEEF_CAFE_2026_KEY",
  ])("takes %s as a variable's name", (name) => {
    expect(looksLikeSecret(name)).toBe(false);
  });
});
