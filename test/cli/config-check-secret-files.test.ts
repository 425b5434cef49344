import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const SECRET = "file-secret-0123456789abcdefghijklmn";

async function preflight(env: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const file = await writeTempConfig(configDocument());
  return runCliCaptured(["config", "check", "--preflight", file], env);
}

async function secretFile(content: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
  const file = join(folder, "secret");
  await writeFile(file, content);
  return file;
}

describe("config check --preflight with <NAME>_FILE", () => {
  it("confirms a secret read from a file, its trailing newline dropped, without printing it", async () => {
    const result = await preflight({ WEBHOOK_SECRET_FILE: await secretFile(`${SECRET}\n`) });
    expect(result).toMatchObject({ code: 0, out: expect.stringContaining("OK (environment confirmed)") });
    expect(result.out + result.err).not.toContain(SECRET);
  });

  it("reports a file it cannot read, naming the variable and the path", async () => {
    const missing = join(await mkdtemp(join(tmpdir(), "webhook-channel-secret-")), "nope");
    const { code, err } = await preflight({ WEBHOOK_SECRET_FILE: missing });
    expect(code).toBe(1);
    expect(err).toContain(
      `channels[0].token_env: cannot read WEBHOOK_SECRET from the file ${missing} named by WEBHOOK_SECRET_FILE: no such file. Fix: make the file readable by the service, or set WEBHOOK_SECRET itself`,
    );
  });

  it("reports a file that holds more than one trailing newline as whitespace around the secret", async () => {
    const { code, err } = await preflight({ WEBHOOK_SECRET_FILE: await secretFile(`${SECRET}\n\n`) });
    expect(code).toBe(1);
    expect(err).toContain("WEBHOOK_SECRET starts or ends with whitespace");
    expect(err).not.toContain(SECRET);
  });

  it("names the file when the value it holds is the problem", async () => {
    const empty = await secretFile("");
    const { code, err } = await preflight({ WEBHOOK_SECRET_FILE: empty });
    expect(code).toBe(1);
    expect(err).toContain(
      `channels[0].token_env: environment variable WEBHOOK_SECRET is empty (read from the file ${empty}, named by WEBHOOK_SECRET_FILE). Fix: write the value into ${empty}, or set WEBHOOK_SECRET itself`,
    );
  });
});
