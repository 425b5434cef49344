/**
 * `state_dir` on a filesystem of its own that fills up (a tmpfs mounted for the test): the
 * message that finds the disk full is refused, `/readyz` says `unavailable`, and once space is
 * freed it says `ready` again with no message sent, since a balancer sends none to a replica
 * that says it cannot write. An empty transaction commits on a full disk, so the readiness
 * confirms with a committed write.
 */
import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";

let harness: ServiceHarness | undefined;
let mounted: string | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
  if (mounted !== undefined) {
    execFileSync("umount", [mounted]);
    await rm(mounted, { recursive: true });
  }
  mounted = undefined;
});

/** Fills the filesystem: writes that fail with ENOSPC are what a full disk gives. */
async function fill(dir: string): Promise<void> {
  for (let index = 0; ; index += 1) {
    try {
      await writeFile(join(dir, `filler-${index}`), Buffer.alloc(64 * 1024, 1));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOSPC") return;
      throw error;
    }
  }
}

async function readyStatus(): Promise<string> {
  const response = await fetch(`${harness?.baseUrl}/readyz`);
  return ((await response.json()) as { status: string }).status;
}

describe("/readyz after state_dir's disk was full", () => {
  it("refuses while the disk is full and is ready again once space is freed, with no message sent", async () => {
    const dir = await mkdtemp(join(tmpdir(), "webhook-channel-full-"));
    // Root in the tests' machines and CI, as the Postgres clusters need too.
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", dir]);
    mounted = dir;
    const stateDir = join(dir, "state");
    harness = await startHarness({}, { status: () => 200 }, { state_dir: stateDir });
    expect((await harness.post({ sender_id: "a", text: "before" })).status).toBe(200);
    await waitFor(() => (harness?.replies.length === 1 ? true : undefined), 10_000, "the first reply");

    const filler = join(dir, "filler");
    await mkdir(filler);
    await fill(filler);
    const refused = await waitFor(async () => {
      const response = await harness?.post({
        sender_id: "a",
        text: `during ${Math.random()}`,
        metadata: { pad: "x".repeat(8_000) },
      });
      return response !== undefined && response.status !== 200 ? response : undefined;
    }, 10_000);
    // A store that fails on SQLite is documented as a full buffer's refusal, with the store's wait.
    expect(refused.status).toBe(503);
    expect(refused.headers.get("retry-after")).toBe("5");
    expect(((await refused.json()) as { code: string }).code).toBe("buffer_full");
    expect(await readyStatus()).toBe("unavailable");

    await rm(filler, { recursive: true });
    await waitFor(
      async () => ((await readyStatus()) === "ready" ? true : undefined),
      10_000,
      "/readyz ready with no message sent",
    );
    expect((await harness.post({ sender_id: "a", text: "after" })).status).toBe(200);
    await waitFor(() => (harness?.replies.length === 2 ? true : undefined), 10_000, "the reply to the message after");
  }, 60_000);
});
