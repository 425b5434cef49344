// The parent's side of bench/receiver.mjs: start it and take its arrival notes.
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { startChild } from "./child-process.mjs";

const ENTRY = fileURLToPath(new URL("./receiver.mjs", import.meta.url));
const TAKE_TIMEOUT_MS = 10_000;

async function ask(child, request) {
  const answer = once(child, "message", { signal: AbortSignal.timeout(TAKE_TIMEOUT_MS) });
  child.send(request);
  const [message] = await answer;
  return message;
}

/** Starts a receiver child; mode "answer", "never" or "refuse". */
export async function startReceiver(mode = "answer") {
  const receiver = await startChild(`receiver (${mode})`, [ENTRY, "--mode", mode], { ipc: true });
  return {
    ...receiver,
    /**
     * Returns the arrivals since the last call as a Map in_reply_to → arrival time (ms on
     * the monotonic clock), plus the total count of replies received so far.
     */
    async take() {
      const notes = await ask(receiver.child, { type: "take" });
      const arrivals = new Map();
      for (let index = 0; index < notes.ids.length; index += 1) arrivals.set(notes.ids[index], notes.times[index]);
      return { arrivals, count: notes.count, connections: notes.connections, held: notes.held };
    },
    /**
     * The count of replies received so far and the receiver's clock when it was read (ms,
     * monotonic), without handing over the notes: for sampling while a load runs.
     */
    async count() {
      const { count, at } = await ask(receiver.child, { type: "count" });
      return { count, at };
    },
    /** Switches the mode; leaving "never" answers every held request. */
    setMode: (mode) => ask(receiver.child, { type: "mode", mode }),
  };
}
