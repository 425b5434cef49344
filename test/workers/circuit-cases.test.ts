/**
 * The receiver circuit's cases over the receiver object's storage, inside workerd: each call of
 * the store (and of the first keeper's held lanes) runs inside a fresh receiver object on its
 * tables, as the object's own keeper uses them.
 */
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import type { CircuitStore, HeldLanes } from "../../src/core/receiver/circuit-store.js";
import { MeteredSql } from "../../src/workers/metered-sql.js";
import { ReceiverStorage } from "../../src/workers/receiver/receiver-storage.js";
import { circuitCases } from "../shared/circuit-cases.js";

/** The object of the last `stores()`: the first keeper holds its lanes in the same tables. */
let current: ReturnType<typeof inObject> | undefined;

/** Runs `use` on the tables of the receiver object of `channel`, inside it. */
function inObject(channel: string) {
  const stub = env.RECEIVERS.get(env.RECEIVERS.idFromName(channel));
  return <T>(use: (storage: ReceiverStorage) => T): Promise<T> =>
    runInDurableObject(stub, (_object, state) => use(new ReceiverStorage(new MeteredSql(state.storage.sql))));
}

circuitCases("Durable Object", {
  async stores() {
    const channel = `channel-${crypto.randomUUID()}`;
    const run = inObject(channel);
    current = run;
    const store: CircuitStore = {
      read: () => run((storage) => storage.read()),
      write: (_channel, state, version) => run((storage) => storage.write(channel, state, version)),
    };
    return { channel, open: () => store };
  },
  held: () => {
    const run = current;
    if (run === undefined) throw new Error("no receiver object opened");
    const held: HeldLanes = {
      add: (key) => run((storage) => storage.add(key)).then(() => undefined),
      addFirst: (key) => run((storage) => storage.addFirst(key)).then(() => undefined),
      take: (limit) => run((storage) => storage.take(limit)),
      delete: (key) => run((storage) => storage.delete(key)).then(() => undefined),
      count: () => run((storage) => storage.count()),
    };
    return held;
  },
});
