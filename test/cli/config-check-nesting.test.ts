/**
 * A configuration nested thousands of levels deep (`"x": [[[[…]]]]`) is a configuration
 * problem with its path, for `config check` and for `serve`, never a stack overflow.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAX_CONFIG_DEPTH } from "../../src/core/config/nesting-depth.js";
import { runService } from "../../src/node/run-service.js";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";

const DEPTH = 5_000;
const PATH = `x${"[0]".repeat(MAX_CONFIG_DEPTH - 1)}`;

/** A valid file but for a key `x` holding arrays nested {@link DEPTH} deep (written as text: stringify would overflow). */
async function deepFile(): Promise<string> {
  const folder = await mkdtemp(join(tmpdir(), "webhook-channel-deep-"));
  const file = join(folder, "config.json");
  const valid = JSON.stringify(configDocument());
  await writeFile(file, `${valid.slice(0, -1)},"x":${"[".repeat(DEPTH)}${"]".repeat(DEPTH)}}`);
  return file;
}

describe("a configuration file nested too deep", () => {
  it("config check names the path and the fix, and exits 1", async () => {
    const file = await deepFile();
    const { code, err } = await runCliCaptured(["config", "check", file]);
    expect(code).toBe(1);
    expect(err).toContain(`error   ${PATH}: is nested deeper than ${MAX_CONFIG_DEPTH} levels of arrays and objects`);
    expect(err).toContain("Fix: remove the nesting");
    expect(err).not.toContain("RangeError");
  });

  it("serve refuses to start on it with the same line", async () => {
    const lines: string[] = [];
    const code = await runService({
      configPath: await deepFile(),
      env: { WEBHOOK_SECRET: "s".repeat(32) },
      write: (line) => lines.push(line),
    });
    expect(code).toBe(1);
    expect(lines.join("\n")).toContain(`invalid configuration: ${PATH}: is nested deeper than ${MAX_CONFIG_DEPTH}`);
  });
});
