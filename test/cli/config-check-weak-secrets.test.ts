import { copyFile, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { newSecret } from "../../src/cli/new-secret.js";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

async function preflight(env: Record<string, string>, extra: Record<string, unknown> = {}) {
  const file = await writeTempConfig(configDocument({}, extra));
  return { file, ...(await runCliCaptured(["config", "check", "--preflight", file], env)) };
}

describe("config check --preflight with a weak secret", () => {
  it("exits 1 for the placeholder of .dev.vars.example, naming the variable and the command that makes a good one", async () => {
    const { file, code, out, err } = await preflight({ WEBHOOK_SECRET: "replace-me" });
    expect(code).toBe(1);
    expect(err).toContain(
      '  error   channels[0].token_env: the secret in WEBHOOK_SECRET is a placeholder from an example, not a secret. Fix: export WEBHOOK_SECRET="$(npx webhook-channel secret)"',
    );
    expect(err).toContain(`${file}: 1 problem(s) in the environment`);
    expect(out + err).not.toContain("replace-me");
    expect(out).not.toContain("OK");
  });

  it("exits 1 for a secret shorter than 32 characters, and 0 for one that webhook-channel secret made", async () => {
    const short = await preflight({ WEBHOOK_SECRET: "s3cr3t-value-0123456789" });
    expect(short.code).toBe(1);
    expect(short.err).toContain("the secret in WEBHOOK_SECRET is shorter than 32 characters");
    expect(short.out + short.err).not.toContain("s3cr3t-value");
    const strong = await preflight({ WEBHOOK_SECRET: newSecret() });
    expect(strong).toMatchObject({ code: 0, out: expect.stringContaining("OK (environment confirmed)") });
  });

  it("checks the admin secret and both secrets of a rotation", async () => {
    const admin = await preflight(
      { WEBHOOK_SECRET: newSecret(), WEBHOOK_ADMIN_SECRET: "changeme" },
      { admin: { token_env: "WEBHOOK_ADMIN_SECRET" } },
    );
    expect(admin.code).toBe(1);
    expect(admin.err).toContain("admin.token_env: the secret in WEBHOOK_ADMIN_SECRET is a placeholder");
    expect(admin.err).toContain("a new admin secret");

    const rotating = await preflight({ WEBHOOK_SECRET: `${newSecret()} dev-secret` });
    expect(rotating.code).toBe(1);
    expect(rotating.err).toContain("the second (old) of the two secrets in WEBHOOK_SECRET is a placeholder");
    expect(rotating.err).toContain("finish the rotation");
  });

  it("checks a secret read from WEBHOOK_SECRET_FILE", async () => {
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
    const secretFile = join(folder, "secret");
    await writeFile(secretFile, "password\n");
    const { code, err } = await preflight({ WEBHOOK_SECRET_FILE: secretFile });
    expect(code).toBe(1);
    expect(err).toContain("the secret in WEBHOOK_SECRET is a placeholder");
    expect(err).not.toContain("password");
  });

  it("flags .dev.vars copied from .dev.vars.example, saying where the value was read and how to replace it", async () => {
    const file = await writeTempConfig(configDocument());
    const devVars = join(dirname(file), ".dev.vars");
    await copyFile(".dev.vars.example", devVars);
    const { code, out, err } = await runCliCaptured(["config", "check", "--preflight", file]);
    expect(code).toBe(1);
    expect(err).toContain(
      `the secret in WEBHOOK_SECRET is a placeholder from an example, not a secret (read from ${devVars})`,
    );
    expect(err).toContain(`Fix: run npx webhook-channel secret and put its output in ${devVars}`);
    expect(out + err).not.toContain("replace-me");

    await writeFile(devVars, `WEBHOOK_SECRET=${newSecret()}\n`);
    expect((await runCliCaptured(["config", "check", "--preflight", file])).code).toBe(0);
  });
});
