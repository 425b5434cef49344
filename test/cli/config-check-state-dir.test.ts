/**
 * `config check --preflight` with `state_dir`: the folder the service would keep its state in is
 * confirmed without being made, and a file in the way or a folder it may not write is a problem
 * with the path and the fix. A start on such a folder fails with the same words.
 */
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openStateDb } from "../../src/node/state/sqlite/sqlite-state.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const SECRET = "a-long-enough-channel-secret-0123456789";

function configWith(stateDir: string): Promise<string> {
  return writeTempConfig({
    state_dir: stateDir,
    channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
    routes: [{ channel: "webhook", brain: "echo" }],
  });
}

function preflight(file: string) {
  return runCliCaptured(["config", "check", "--preflight", file], { WEBHOOK_SECRET: SECRET });
}

describe("config check --preflight with state_dir", () => {
  it("confirms a folder still to be made, and makes nothing", async () => {
    const stateDir = join(await mkdtemp(join(tmpdir(), "webhook-channel-state-dir-")), "a", "b");
    const { code, out } = await preflight(await configWith(stateDir));
    expect(code).toBe(0);
    expect(out).toContain("OK (environment confirmed)");
    expect(existsSync(stateDir)).toBe(false);
  });

  it("names a file in the way, with the fix", async () => {
    const root = await mkdtemp(join(tmpdir(), "webhook-channel-state-dir-"));
    await writeFile(join(root, "afile"), "not a folder");
    const { code, err } = await preflight(await configWith(join(root, "afile", "state")));
    expect(code).toBe(1);
    expect(err).toContain(`state_dir: ${join(root, "afile")} is a file, not a folder`);
    expect(err).toContain("point state_dir at a folder this user may write");
  });
});

describe("config check --preflight with state_dir where no folder can be made", () => {
  it("names /proc, which every right allows and the file system refuses", async () => {
    const { code, err } = await preflight(await configWith("/proc/webhook-channel-state"));
    expect(code).toBe(1);
    expect(err).toContain("state_dir: /proc (where /proc/webhook-channel-state would be created) takes no new folder");
  });
});

describe("opening state_dir", () => {
  it("says which path is in the way and the fix, rather than the system's ENOTDIR", async () => {
    const root = await mkdtemp(join(tmpdir(), "webhook-channel-state-dir-"));
    await writeFile(join(root, "afile"), "not a folder");
    expect(() => openStateDb(join(root, "afile", "state"))).toThrow(
      `state_dir ${join(root, "afile", "state")}: ${join(root, "afile")} is a file, not a folder; point state_dir at a folder`,
    );
  });

  it("fails at once under a file system that refuses every create (/proc), instead of looping", () => {
    expect(() => openStateDb("/proc/webhook-channel-state")).toThrow(
      /state_dir \/proc\/webhook-channel-state: cannot create/,
    );
  });
});
