import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { configJsonSchema } from "../../src/core/config/config-json-schema.js";
import { VERSION } from "../../src/core/version.js";
import { runService } from "../../src/node/run-service.js";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

async function cli(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  return runCliCaptured(args, env);
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
    const set = await cli(["config", "check", "--preflight", file], {
      WEBHOOK_SECRET: "very-secret-value-0123456789abcdef",
    });
    expect(set.code).toBe(0);
    expect(set.out + set.err).not.toContain("very-secret-value-0123456789abcdef");
  });

  it("without --preflight ignores the environment", async () => {
    const file = await writeTempConfig(configDocument());
    expect((await cli(["config", "check", file])).code).toBe(0);
  });

  it("exits 0 with a warning for a non-loopback bind", async () => {
    const file = await writeTempConfig(configDocument({ bind: "0.0.0.0:8090" }));
    expect(await cli(["config", "check", file])).toMatchObject({ code: 0, err: expect.stringContaining("warning") });
  });

  it("takes the file with --config as well as as an argument", async () => {
    const file = await writeTempConfig(configDocument());
    expect(await cli(["config", "check", "--config", file])).toMatchObject({ code: 0, out: `${file}: OK\n` });
    expect(await cli(["config", "check", "-c", file, "--preflight"], { WEBHOOK_SECRET: "s".repeat(32) })).toMatchObject(
      {
        code: 0,
      },
    );
  });

  it("checks ./config.json when no file is given", async () => {
    expect(await cli(["config", "check"])).toMatchObject({ code: 0, out: "./config.json: OK\n" });
  });

  it("refuses a file given both with --config and as the argument", async () => {
    const { code, err } = await cli(["config", "check", "--config", "a.json", "b.json"]);
    expect(code).toBe(2);
    expect(err).toContain("not both");
  });

  it.each([
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

describe("help and version", () => {
  it.each([
    [["--help"], "<command>"],
    [["-h"], "<command>"],
    [["help"], "<command>"],
    [["serve", "--help"], "serve [--config <file>]"],
    [["serve", "-h", "--config", "missing.json"], "serve [--config <file>]"],
    // -h among other short options, as `node dist/node.js -hc file` reads it.
    [["serve", "-hc", "missing.json"], "serve [--config <file>]"],
    [["config", "--help"], "config check"],
    [["config", "check", "--help"], "config check [--preflight]"],
    [["config", "check", "--preflight", "-h"], "config check [--preflight]"],
    [["help", "config", "check"], "config check [--preflight]"],
    [["dead-letters", "--help"], "dead-letters replay"],
    [["dead-letters", "list", "--help"], "dead-letters list [--json]"],
    [["dead-letters", "replay", "--help"], "dead-letters replay (--id <id>... | --all)"],
    [["secret", "--help"], "secret"],
    [["schema", "--help"], "schema"],
  ])("%j prints its usage and exits 0", async (args, usage) => {
    const { code, out, err } = await cli(args);
    expect(code).toBe(0);
    expect(err).toBe("");
    expect(out).toMatch(/^usage:/);
    expect(out).toContain(`npx webhook-channel ${usage}`);
  });

  it.each([[["--version"]], [["-v"]], [["version"]], [["serve", "--version"]]])(
    "%j prints the package version",
    async (args) => {
      expect(await cli(args)).toEqual({ code: 0, out: `${VERSION}\n`, err: "" });
    },
  );

  it("exits 2 on help for a command that does not exist", async () => {
    expect((await cli(["frobnicate", "--help"])).code).toBe(2);
    expect((await cli(["help", "frobnicate"])).code).toBe(2);
  });
});

describe("hints name a command that works in a clone", () => {
  it("every command in the help is spelled npx webhook-channel", async () => {
    const texts = await Promise.all(
      [
        ["--help"],
        ...["serve", "config check", "dead-letters list", "dead-letters replay", "secret", "schema"].map((command) => [
          ...command.split(" "),
          "--help",
        ]),
      ].map(async (args) => (await cli(args)).out),
    );
    for (const text of texts) {
      expect(text).not.toMatch(/(?<!npx )webhook-channel (serve|config|dead-letters|secret|schema)/);
    }
  });

  it("the preflight hint for a channel secret says npx webhook-channel secret", async () => {
    const file = await writeTempConfig(configDocument());
    const { err } = await cli(["config", "check", "--preflight", file]);
    expect(err).toContain('export WEBHOOK_SECRET="$(npx webhook-channel secret)"');
  });

  it("serve without the secret says to generate one with npx webhook-channel secret", async () => {
    const file = await writeTempConfig(configDocument());
    const lines: string[] = [];
    const code = await runService({ configPath: file, env: {}, write: (line) => lines.push(line) });
    expect(code).toBe(1);
    expect(lines.join("\n")).toContain('export WEBHOOK_SECRET=\\"$(npx webhook-channel secret)\\"');
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
