import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openSqliteBackend } from "../../../../src/node/state/sqlite/sqlite-backend.js";
import { STATE_FILE } from "../../../../src/node/state/sqlite/state-file.js";
import { createLogSink } from "../../../support/log-sink.js";

describe("the state_dir file's start line", () => {
  it("names the SQLite file it created, not only its folder", async () => {
    const stateDir = await mkdtemp(join(tmpdir(), "webhook-channel-created-"));
    const { logger, lines } = createLogSink("info");
    const state = openSqliteBackend(stateDir, logger);
    await state.close();
    expect(lines).toContainEqual(
      expect.objectContaining({ msg: "state_dir file created", path: join(stateDir, STATE_FILE) }),
    );
  });
});
