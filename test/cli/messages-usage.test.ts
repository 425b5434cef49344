/**
 * `messages` usage errors exit 2, name the flag and what it takes, and print the action's
 * usage; help is there for each action.
 */
import { describe, expect, it } from "vitest";
import { runCliCaptured } from "../support/run-cli-captured.js";

async function usageError(args: string[]): Promise<string> {
  const { code, out, err } = await runCliCaptured(["messages", ...args], {});
  expect(code).toBe(2);
  expect(out).toBe("");
  return err;
}

describe("messages usage", () => {
  it("names the flag and what it allows", async () => {
    expect(await usageError(["list", "--status", "lost"])).toMatch(
      /^webhook-channel: --status must be one of accepted, retrying, waiting, delivered, dead_letter, replayed \(got 'lost'\)\nusage: npx webhook-channel messages list /,
    );
    expect(await usageError(["list", "--since", "yesterday"])).toContain(
      "--since must be an ISO 8601 date or time, UTC unless it gives an offset (e.g. 2026-11-27T04:00:00Z, or a date: 2026-11-27), or epoch milliseconds (got 'yesterday')",
    );
    expect(await usageError(["list", "--since", "2026-13-45"])).toContain("--since must be an ISO 8601 date or time");
    for (const limit of ["0", "501", "ten", "1.5"]) {
      expect(await usageError(["list", "--limit", limit])).toContain(
        `--limit must be a whole number from 1 to 500 (got '${limit}')`,
      );
    }
    expect(await usageError(["list", "--cursor", "not a cursor"])).toContain(
      "--cursor must be a next_cursor that messages list printed",
    );
    expect(await usageError(["list", "--conversation="])).toContain("--conversation needs a value");
  });

  it("refuses a missing or extra id, list options on show, and two sources", async () => {
    expect(await usageError(["show"])).toMatch(
      /^webhook-channel: show needs one message id: messages show <id>\nusage: npx webhook-channel messages show /,
    );
    expect(await usageError(["show", "a", "b"])).toContain("show needs one message id");
    expect(await usageError(["show", "a", "--all"])).toContain("--all is for messages list");
    expect(await usageError(["show", "a", "--since", "0"])).toContain("--since is for messages list");
    expect(await usageError(["list", "m1"])).toContain("list takes no argument (got 'm1')");
    expect(await usageError(["show", "a", "--url", "http://x", "--config", "c.json"])).toContain(
      "give either --url or --config",
    );
    expect(await usageError(["show", "a", "--admin-token-env", "X"])).toContain("--admin-token-env goes with --url");
    expect(await usageError(["list", "--bogus"])).toContain("--bogus");
    expect(await usageError([])).toContain("missing one of show, list");
    expect(await usageError(["grep"])).toContain("unknown action 'messages grep'");
  });

  it("has help for the command and each action, and lists them in the overview", async () => {
    const overview = await runCliCaptured(["--help"], {});
    expect(overview.out).toContain("messages show <id>");
    expect(overview.out).toContain("messages list [--conversation <id>]");
    const list = await runCliCaptured(["messages", "list", "--help"], {});
    expect(list).toMatchObject({ code: 0, out: expect.stringContaining("--cursor <c>") });
    expect((await runCliCaptured(["help", "messages", "show"], {})).out).toContain("why it waits");
    expect((await runCliCaptured(["messages", "--help"], {})).out).toContain("messages show <id>");
  });
});
