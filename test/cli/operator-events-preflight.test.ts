import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const CHANNEL_SECRET = "channel-secret-value-0123456789abcdef";

async function preflight(env: Record<string, string>) {
  const file = await writeTempConfig(
    configDocument({}, { operator_events: { url: "https://ops.example/events", signing_secret_env: "OPS_SECRET" } }),
  );
  return runCliCaptured(["config", "check", "--preflight", file], { WEBHOOK_SECRET: CHANNEL_SECRET, ...env });
}

describe("config check --preflight with operator_events", () => {
  it("names the unset signing variable by its JSON path, with the command that makes one", async () => {
    const { code, err } = await preflight({});
    expect(code).toBe(1);
    expect(err).toContain("operator_events.signing_secret_env");
    expect(err).toContain("environment variable OPS_SECRET is not set");
    expect(err).toContain('export OPS_SECRET="whsec_$(openssl rand -base64 32)"');
  });

  it("refuses a value that is no whsec_ secret without printing it, and accepts a real one", async () => {
    const bad = await preflight({ OPS_SECRET: "not-a-whsec-secret" });
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("operator_events.signing_secret_env");
    expect(bad.err).not.toContain("not-a-whsec-secret");
    const good = await preflight({ OPS_SECRET: `whsec_${randomBytes(32).toString("base64")}` });
    expect(good.code).toBe(0);
  });
});
