import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ChannelError } from "../../src/core/channel-error.js";
import { createSecretEnv, secretFileOf } from "../../src/node/secret-env.js";

async function secretFile(content: string): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
  const file = join(folder, "secret");
  await writeFile(file, content);
  return file;
}

describe("createSecretEnv", () => {
  it("reads the secret from <NAME>_FILE when <NAME> is unset, dropping one trailing newline", async () => {
    const lf = await secretFile("from-file\n");
    const crlf = await secretFile("from-crlf\r\n");
    const bare = await secretFile("no-newline");
    const two = await secretFile("two-newlines\n\n");
    const env = createSecretEnv({ A_FILE: lf, B_FILE: crlf, C_FILE: bare, D_FILE: two });
    expect(env("A")).toBe("from-file");
    expect(env("B")).toBe("from-crlf");
    expect(env("C")).toBe("no-newline");
    // Only one: a second newline is in the secret, and preflight says so.
    expect(env("D")).toBe("two-newlines\n");
  });

  it("prefers the variable itself, even empty, to its file", async () => {
    const file = await secretFile("from-file");
    expect(createSecretEnv({ A: "direct", A_FILE: file })("A")).toBe("direct");
    expect(createSecretEnv({ A: "", A_FILE: file })("A")).toBe("");
    expect(secretFileOf({ A: "direct", A_FILE: file }, "A")).toBeUndefined();
  });

  it("gives undefined when neither is set, or <NAME>_FILE is empty", () => {
    expect(createSecretEnv({})("A")).toBeUndefined();
    expect(createSecretEnv({ A_FILE: "" })("A")).toBeUndefined();
  });

  it("names the variable and the path of a file it cannot read, and nothing else", async () => {
    const folder = await mkdtemp(join(tmpdir(), "webhook-channel-secret-"));
    const missing = join(folder, "missing");
    const error = (() => {
      try {
        createSecretEnv({ TOKEN_FILE: missing })("TOKEN");
      } catch (caught) {
        return caught;
      }
      return undefined;
    })();
    expect(error).toBeInstanceOf(ChannelError);
    expect(error).toMatchObject({
      code: "config_invalid",
      variable: "TOKEN",
      message: `cannot read TOKEN from the file ${missing} named by TOKEN_FILE: no such file`,
    });
    expect(() => createSecretEnv({ TOKEN_FILE: folder })("TOKEN")).toThrow(/it is a directory/);
  });

  it("reads a file once per lookup; a new lookup (a reload) reads it again", async () => {
    const file = await secretFile("first\n");
    const env = createSecretEnv({ A_FILE: file });
    expect(env("A")).toBe("first");
    await writeFile(file, "second\n");
    expect(env("A")).toBe("first");
    expect(createSecretEnv({ A_FILE: file })("A")).toBe("second");
  });
});
