import { afterEach, describe, expect, it } from "vitest";
import { openPostgresPool } from "../../../../src/node/state/postgres/postgres-pool.js";
import { createPostgresTimelineStore } from "../../../../src/node/state/postgres/postgres-timeline-store.js";
import { freePort } from "../../../support/free-port.js";

let close: (() => Promise<void>) | undefined;

afterEach(async () => {
  await close?.();
  close = undefined;
});

describe("the Postgres timeline's reads with the database down", () => {
  it("fail as 503 state_unavailable, as the admin API answers them, not as an unexpected error", async () => {
    // Nothing listens on the port: every connection is refused, as with a stopped server.
    const pool = openPostgresPool(`postgres://webhook@127.0.0.1:${await freePort()}/webhook`, { max: 1 });
    close = () => pool.end();
    const store = createPostgresTimelineStore(pool);
    const reads: (() => unknown)[] = [() => store.one("m1"), () => store.page({ limit: 10 }), () => store.activity(0)];
    for (const read of reads) {
      await expect(Promise.resolve().then(read)).rejects.toMatchObject({
        code: "state_unavailable",
        status: 503,
        retryable: true,
      });
    }
  });
});
