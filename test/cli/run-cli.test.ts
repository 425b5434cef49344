import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/run-cli.js";
import { configJsonSchema } from "../../src/core/config/config-json-schema.js";
import { VERSION } from "../../src/core/version.js";
import { configDocument } from "../support/configs.js";
import { writeTempConfig } from "../support/spawn-node.js";

async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await runCli(args, {
    env,
    out: (text) => {
      out += text;
    },
    err: (text) => {
      err += text;
    },
  });
  return { code, out, err };
}

describe("webhook-channel config check", () => {
  it("exits 0 for a valid file", async () => {
    const file = await writeTempConfig(configDocument());
    expect(await cli(["config", "check", file])).toMatchObject({ code: 0, out: expect.stringContaining("OK") });
  });

  it("exits 1 and prints each problem with its path and fix", async () => {
    const file = await writeTempConfig(configDocument({ bind: "nope", bnd: 1 }));
    const { code, err } = await cli(["config", "check", file]);
    expect(code).toBe(1);
    expect(err).toContain("channels[0].webhook.bind:");
    expect(err).toContain("channels[0].webhook.bnd:");
    expect(err).toContain("Fix:");
  });

  it("exits 1 for a missing file and for a file that is not JSON", async () => {
    expect((await cli(["config", "check", "/nonexistent/config.json"])).code).toBe(1);
    const file = await writeTempConfig("x");
    const { writeFile } = await import("node:fs/promises");
    await writeFile(file, "{ not json");
    expect(await cli(["config", "check", file])).toMatchObject({
      code: 1,
      err: expect.stringContaining("not valid JSON"),
    });
  });

  it("--preflight exits 1 when the secret variable is unset, and never prints a secret", async () => {
    const file = await writeTempConfig(configDocument());
    const missing = await cli(["config", "check", "--preflight", file]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain("WEBHOOK_SECRET is not set");
    const empty = await cli(["config", "check", "--preflight", file], { WEBHOOK_SECRET: "" });
    expect(empty).toMatchObject({ code: 1, err: expect.stringContaining("WEBHOOK_SECRET is empty") });
    const set = await cli(["config", "check", "--preflight", file], { WEBHOOK_SECRET: "very-secret-value" });
    expect(set.code).toBe(0);
    expect(set.out + set.err).not.toContain("very-secret-value");
  });

  it("without --preflight ignores the environment", async () => {
    const file = await writeTempConfig(configDocument());
    expect((await cli(["config", "check", file])).code).toBe(0);
  });

  it("exits 0 with a warning for a non-loopback bind", async () => {
    const file = await writeTempConfig(configDocument({ bind: "0.0.0.0:8090" }));
    expect(await cli(["config", "check", file])).toMatchObject({ code: 0, err: expect.stringContaining("warning") });
  });

  it.each([
    [["config", "check"]],
    [["config", "check", "a.json", "b.json"]],
    [["config", "check", "--nope", "a.json"]],
    [["config", "lint", "a.json"]],
    [["config"]],
    [["frobnicate"]],
    [[]],
    [["secret", "extra"]],
  ])("exits 2 on the usage error %j", async (args) => {
    const { code, err } = await cli(args);
    expect(code).toBe(2);
    expect(err).toContain("usage:");
  });
});

describe("webhook-channel secret", () => {
  it("prints a new base64url secret of 32 random bytes each time", async () => {
    const first = (await cli(["secret"])).out.trim();
    const second = (await cli(["secret"])).out.trim();
    expect(first).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(first, "base64url")).toHaveLength(32);
    expect(first).not.toBe(second);
  });
});

describe("shipped files", () => {
  it("config.schema.json is the schema generated from the zod config (run npm run schema)", async () => {
    const shipped: unknown = JSON.parse(await readFile("config.schema.json", "utf8"));
    expect(shipped).toEqual(configJsonSchema());
  });

  it("the version in User-Agent is package.json's", async () => {
    const pkg = JSON.parse(await readFile("package.json", "utf8")) as { version: string };
    expect(VERSION).toBe(pkg.version);
  });
});
