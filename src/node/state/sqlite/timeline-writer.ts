// Entry of the timeline writer thread (dist/timeline-writer.js), started by dist/node.js with a
// state_dir: it writes the message timeline to its own SQLite file, off the event loop that
// accepts and delivers messages.
import { parentPort, workerData } from "node:worker_threads";
import { errorMessage } from "../../../core/channel-error.js";
import { createSqliteTimelineStore } from "./sqlite-timeline-store.js";
import { openTimelineDb } from "./timeline-db.js";
import type { FromTimelineWriter, TimelineWriterData, ToTimelineWriter } from "./timeline-writer-messages.js";

const port = parentPort;
if (port === null) throw new Error("timeline-writer.js runs as the timeline thread of dist/node.js");
const { stateDir } = workerData as TimelineWriterData;
const db = openTimelineDb(stateDir);
const store = createSqliteTimelineStore(db);

const answer = (message: FromTimelineWriter): void => port.postMessage(message);

port.on("message", (message: ToTimelineWriter) => {
  if (message.kind === "close") {
    db.close();
    port.close();
    return;
  }
  const { id } = message;
  const failed = (error: unknown): void => answer({ id, error: errorMessage(error) });
  try {
    const made = message.kind === "write" ? store.write(message.writes, message.counts) : store.prune(message.limits);
    Promise.resolve(made).then(() => answer({ id }), failed);
  } catch (error) {
    failed(error);
  }
});
