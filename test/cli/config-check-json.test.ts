/**
 * `config check` reads the file as the service does: a key written twice is refused with its
 * path, and a byte-order mark first is no problem.
 */
import { writeFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { runCliCaptured } from "../support/run-cli-captured.js";
import { writeTempConfig } from "../support/spawn-node.js";

const VALID = {
  channels: [{ type: "webhook", token_env: "WEBHOOK_SECRET", webhook: { outbound_url: "http://127.0.0.1:9/x" } }],
  routes: [{ channel: "webhook", brain: "echo" }],
};

describe("config check on the file's JSON", () => {
  it("refuses a key written twice, naming its path", async () => {
    const file = await writeTempConfig(VALID);
    const text = JSON.stringify(VALID).replace(
      '"token_env":"WEBHOOK_SECRET"',
      '"token_env":"A","token_env":"WEBHOOK_SECRET"',
    );
    await writeFile(file, text);
    const { code, err } = await runCliCaptured(["config", "check", file]);
    expect(code).toBe(1);
    expect(err).toContain("channels[0].token_env: is written twice in one object");
  });

  it("takes a file that begins with a byte-order mark", async () => {
    const file = await writeTempConfig(VALID);
    await writeFile(file, `\uFEFF${JSON.stringify(VALID)}`);
    expect((await runCliCaptured(["config", "check", file])).code).toBe(0);
  });
});
