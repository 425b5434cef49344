import { describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

async function preflight(env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const file = await writeTempConfig(configDocument({}, { admin: { token_env: "WEBHOOK_ADMIN_SECRET" } }));
  return runCliCaptured(["config", "check", "--preflight", file], env);
}

describe("config check --preflight with admin.token_env", () => {
  it("refuses an admin secret equal to a channel secret, without printing it", async () => {
    const { code, err } = await preflight({
      WEBHOOK_SECRET: "shared-secret-value-0123456789abcdef",
      WEBHOOK_ADMIN_SECRET: "shared-secret-value-0123456789abcdef",
    });
    expect(code).toBe(1);
    expect(err).toContain("admin.token_env");
    expect(err).toContain("WEBHOOK_ADMIN_SECRET holds the same secret as WEBHOOK_SECRET");
    expect(err).not.toContain("shared-secret-value-0123456789abcdef");
  });

  it("refuses it when it equals either of two rotating channel secrets", async () => {
    const { code } = await preflight({
      WEBHOOK_SECRET: "new-secret-1-0123456789abcdefghijk old-secret-2-0123456789abcdefghijk",
      WEBHOOK_ADMIN_SECRET: "old-secret-2-0123456789abcdefghijk",
    });
    expect(code).toBe(1);
  });

  it("asks for the admin secret when it is unset, and accepts a distinct one", async () => {
    const unset = await preflight({ WEBHOOK_SECRET: "channel-secret-value-0123456789abcdef" });
    expect(unset.code).toBe(1);
    expect(unset.err).toContain("WEBHOOK_ADMIN_SECRET is not set");
    const ok = await preflight({
      WEBHOOK_SECRET: "channel-secret-value-0123456789abcdef",
      WEBHOOK_ADMIN_SECRET: "admin-secret-value-0123456789abcdef",
    });
    expect(ok.code).toBe(0);
  });
});
