/**
 * A command that reads `state_dir` on a path where the service never ran (a typo, another
 * working directory) says so and creates nothing: opening the file would create an empty one,
 * and the command would report "nothing there" as if it had looked at the real state.
 */
import { mkdtemp, readdir } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { configDocument } from "../support/configs.js";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

describe("offline commands on a state_dir where the service never ran", () => {
  it.each([
    [["dead-letters", "list"], "webhook-channel.sqlite"],
    [["dead-letters", "replay", "--all"], "webhook-channel.sqlite"],
    [["messages", "list"], "timeline.sqlite"],
    [["messages", "show", "m-1"], "timeline.sqlite"],
  ])("%j says which file is missing where, exits 1, and creates nothing", async (words, name) => {
    const parent = await mkdtemp(join(tmpdir(), "webhook-channel-ghost-"));
    const stateDir = join(parent, "typo");
    const file = await writeTempConfig(configDocument({}, { state_dir: stateDir }));
    const { code, out, err } = await runCliCaptured([...words, "--config", file]);
    expect(code).toBe(1);
    expect(out).toBe("");
    expect(err).toContain(`${file} keeps its state in ${stateDir}, and there is no ${name} there`);
    expect(err).toContain("Nothing was created.");
    expect(await readdir(parent)).toEqual([]);
  });
});
