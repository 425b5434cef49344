// The parent's side of bench/receiver.mjs: start it and take its arrival notes.
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { startChild } from "./child-process.mjs";

const ENTRY = fileURLToPath(new URL("./receiver.mjs", import.meta.url));
const TAKE_TIMEOUT_MS = 10_000;

/** Starts a receiver child; mode "answer" or "never". */
export async function startReceiver(mode = "answer") {
  const receiver = await startChild(`receiver (${mode})`, [ENTRY, "--mode", mode], { ipc: true });
  return {
    ...receiver,
    /**
     * Returns the arrivals since the last call as a Map in_reply_to → arrival time (ms on
     * the monotonic clock), plus the total count of replies received so far.
     */
    async take() {
      const reply = once(receiver.child, "message", { signal: AbortSignal.timeout(TAKE_TIMEOUT_MS) });
      receiver.child.send({ type: "take" });
      const [notes] = await reply;
      const arrivals = new Map();
      for (let index = 0; index < notes.ids.length; index += 1) arrivals.set(notes.ids[index], notes.times[index]);
      return { arrivals, count: notes.count, held: notes.held };
    },
  };
}
