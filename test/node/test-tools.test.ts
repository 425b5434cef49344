/**
 * scripts/test-tools.mjs, the check every test command runs first: a missing program fails the
 * command, naming the program, its Debian package and how to install it, the same for each;
 * where apt-get cannot run, `--install` says why and fails too.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { SUITES, TOOLS } from "../../scripts/test-tools.mjs";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Runs the script with an empty PATH, where only programs in the sbin folders and Postgres's are found. */
function withoutPath(args: string[]) {
  const run = spawnSync(process.execPath, ["scripts/test-tools.mjs", ...args], {
    cwd: root,
    env: { PATH: "" },
    encoding: "utf8",
  });
  return { status: run.status, stderr: run.stderr };
}

describe("scripts/test-tools.mjs", () => {
  it("fails a suite whose programs are missing, naming each with its package and how to install them", () => {
    const { status, stderr } = withoutPath(["test"]);
    expect(status).toBe(1);
    expect(stderr).toContain("test-tools: npm test needs programs that are not installed:");
    expect(stderr).toMatch(/ {2}promtool +checks \/metrics and docs\/alerts\.yml \(Debian package prometheus\)/);
    expect(stderr).toMatch(/ {2}openssl +.*\(Debian package openssl\)/);
    expect(stderr).toContain("Install them with: npm run test:tools");
    expect(stderr).toMatch(/or: sudo apt-get install -y --no-install-recommends .*prometheus/);
  });

  it("--install says why it cannot install, and fails, where there is no apt-get", () => {
    const { status, stderr } = withoutPath(["--install", "test"]);
    expect(status).toBe(1);
    expect(stderr).toContain("npm run test:tools cannot install them: there is no apt-get here");
  });

  it("refuses an unknown suite with its usage", () => {
    expect(withoutPath(["everything"])).toMatchObject({ status: 2, stderr: expect.stringContaining("usage:") });
  });

  it("is what every test command runs first, for its own suite", () => {
    const scripts = (JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { scripts: Record<string, string> })
      .scripts;
    for (const [suite, command] of Object.entries(SUITES)) {
      const script = scripts[command === "npm test" ? "test" : command.replace("npm run ", "")];
      expect(script, command).toMatch(new RegExp(`^node scripts/test-tools\\.mjs ${suite} && `));
    }
    expect(scripts["test:tools"]).toBe("node scripts/test-tools.mjs --install all");
    for (const tool of TOOLS) expect(tool.suites.length, tool.name).toBeGreaterThan(0);
  });
});
