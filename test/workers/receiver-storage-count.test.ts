/**
 * The receiver object's count of waiting conversations, which its keeper asks at every report and
 * timer: read from the table once per instance and kept since. A count of the table reads (and
 * bills) every row: through an outage with N conversations waiting, each report read N rows.
 * Inside workerd, on the object's own SQLite, reads as the object meters them.
 */
import { runInDurableObject } from "cloudflare:test";
import { env as poolEnv } from "cloudflare:workers";
import { expect, it } from "vitest";
import { MeteredSql } from "../../src/workers/metered-sql.js";
import { ReceiverStorage } from "../../src/workers/receiver/receiver-storage.js";

it("counts the waiting conversations from the table once, then keeps the count as they come and go", async () => {
  const stub = poolEnv.RECEIVERS.get(poolEnv.RECEIVERS.idFromName(`count-${crypto.randomUUID()}`));
  const seen = await runInDurableObject(stub, (_instance, state) => {
    const sql = new MeteredSql(state.storage.sql);
    const storage = new ReceiverStorage(sql);
    for (let index = 0; index < 200; index += 1) storage.add(`lane-${index}`);
    const first = storage.count();
    const readBefore = sql.usage.rowsRead;
    const again = storage.count();
    const readByAgain = sql.usage.rowsRead - readBefore;
    storage.add("lane-0"); // waits already: not counted twice
    storage.take(50);
    storage.delete("lane-199");
    storage.delete("lane-199"); // gone already
    storage.addFirst("lane-0");
    const kept = storage.count();
    // A new instance over the same storage counts from the table.
    const fresh = new ReceiverStorage(new MeteredSql(state.storage.sql)).count();
    return { first, again, readByAgain, kept, fresh };
  });
  expect(seen).toEqual({ first: 200, again: 200, readByAgain: 0, kept: 150, fresh: 150 });
});
