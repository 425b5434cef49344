import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../../", import.meta.url));

describe("the test output", () => {
  it("has no workerd 'WebSocket peer disconnected' noise when the Workers tests pass", () => {
    // One small Workers test file, run by the same vitest configuration as npm test.
    const run = spawnSync(
      process.execPath,
      ["node_modules/vitest/vitest.mjs", "run", "--project", "workers", "test/workers/worker-fetch.test.ts"],
      { cwd: root, encoding: "utf8", timeout: 120_000, env: { ...process.env, FORCE_COLOR: "0" } },
    );
    const output = `${run.stdout}${run.stderr}`;
    expect(run.status, output).toBe(0);
    expect(output).toContain("passed");
    expect(output).not.toContain("WebSocket peer disconnected");
  });
});
