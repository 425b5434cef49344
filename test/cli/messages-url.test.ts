/**
 * `messages show` and `messages list` with `--url`: a running service's timeline through its
 * admin API, printed for people and as the API's own JSON.
 */
import { afterEach, describe, expect, it } from "vitest";
import {
  ADMIN,
  expectCliReadsTimelines,
  ONE_ATTEMPT,
  refuseBadConversation,
  sendAndSettle,
} from "../support/message-timelines.js";
import { type ServiceHarness, startHarness } from "../support/node-service.js";
import { runCliCaptured } from "../support/run-cli-captured.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("messages --url against a running service", () => {
  it("shows a delivered and a dead-lettered message's timeline and lists a conversation page by page", async () => {
    harness = await startHarness(
      ONE_ATTEMPT,
      { status: refuseBadConversation },
      { admin: { token_env: "ADMIN_SECRET" } },
      { ADMIN_SECRET: ADMIN },
    );
    const sent = await sendAndSettle(harness);
    await expectCliReadsTimelines(harness, sent, ["--url", harness.baseUrl], { WEBHOOK_ADMIN_SECRET: ADMIN });
  });

  it("needs the admin secret, and reports a refusal and a timeline that is off", async () => {
    harness = await startHarness(
      {},
      {},
      { admin: { token_env: "ADMIN_SECRET" }, timeline: { retention_hours: 0 } },
      { ADMIN_SECRET: ADMIN },
    );
    const url = harness.baseUrl;
    const unset = await runCliCaptured(["messages", "show", "m1", "--url", url], {});
    expect(unset).toMatchObject({ code: 1, err: expect.stringContaining("WEBHOOK_ADMIN_SECRET is not set") });
    const wrong = await runCliCaptured(["messages", "list", "--url", url, "--admin-token-env", "OTHER"], {
      OTHER: "not-the-admin-secret",
    });
    expect(wrong).toMatchObject({ code: 1, err: expect.stringContaining(`${url}: 401 from the admin API`) });
    // The 404 of a timeline that is off is not taken for an unknown id.
    const off = await runCliCaptured(["messages", "show", "m1", "--url", url], { WEBHOOK_ADMIN_SECRET: ADMIN });
    expect(off).toMatchObject({ code: 1, out: "" });
    expect(off.err).toContain("404 from the admin API: The message timeline is off");
  });

  it("says when the service cannot be reached", async () => {
    const { code, err } = await runCliCaptured(["messages", "list", "--url", "http://127.0.0.1:9"], {
      WEBHOOK_ADMIN_SECRET: ADMIN,
    });
    expect(code).toBe(1);
    expect(err).toMatch(/^http:\/\/127\.0\.0\.1:9: /);
  });

  it("reads a --since far ahead as the API does (epoch ms past the year 9999 have no ISO form it reads)", async () => {
    harness = await startHarness({}, {}, { admin: { token_env: "ADMIN_SECRET" } }, { ADMIN_SECRET: ADMIN });
    const args = ["messages", "list", "--since", "999999999999999", "--url", harness.baseUrl];
    const run = await runCliCaptured(args, { WEBHOOK_ADMIN_SECRET: ADMIN });
    expect(run.err).toBe("no message matches\n");
  });
});
