/**
 * An offline dead-letters command on a state it cannot open (a file of a newer release, a folder
 * this user may not write) says why in one line and exits 1, rather than end in a stack trace.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { STATE_FILE } from "../../src/node/state/sqlite/sqlite-state.js";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

describe("dead-letters on a state it cannot open", () => {
  it.each([["list"], ["replay", "--all"]])("%j says why and exits 1", async (...words) => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-unopenable-"));
    const db = new Database(join(stateDir, STATE_FILE));
    db.pragma("user_version = 999");
    db.close();
    const file = await writeTempConfig(configDocument({}, { state_dir: stateDir }));
    const { code, out, err } = await runCliCaptured(["dead-letters", ...words, "--config", file]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toMatch(new RegExp(`^cannot open the state in ${stateDir}: .*newer webhook-channel`));
    expect(err.split("\n").filter((line) => line !== "")).toHaveLength(1);
  });
});
