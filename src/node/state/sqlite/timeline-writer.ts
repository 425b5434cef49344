// Entry of the timeline writer thread (dist/timeline-writer.js), started by dist/node.js with a
// state_dir: it writes the message timeline to its own SQLite file, off the event loop that
// accepts and delivers messages.
import { parentPort, workerData } from "node:worker_threads";
import { errorMessage } from "../../../core/channel-error.js";
import { createSqliteTimelineStore } from "./sqlite-timeline-store.js";
import { openTimelineDb } from "./timeline-db.js";
import { createTimelineTransaction } from "./timeline-transaction.js";
import type {
  FromTimelineWriter,
  TimelineWriterData,
  TimelineWriterLoss,
  ToTimelineWriter,
} from "./timeline-writer-messages.js";

const port = parentPort;
if (port === null) throw new Error("timeline-writer.js runs as the timeline thread of dist/node.js");
const { stateDir } = workerData as TimelineWriterData;
const db = openTimelineDb(stateDir);
const store = createSqliteTimelineStore(db);
const transaction = createTimelineTransaction(db, (lost) => port.postMessage(lost satisfies TimelineWriterLoss));

const answer = (message: FromTimelineWriter): void => port.postMessage(message);

port.on("message", (message: ToTimelineWriter) => {
  if (message.kind === "close") {
    transaction.commit();
    db.close();
    port.close();
    return;
  }
  const { id } = message;
  try {
    if (message.kind === "write") {
      transaction.write(() => store.write(message.writes, message.counts), message.writes.length);
    } else {
      // A prune's deletes are short transactions of their own; a reader wants what was written.
      transaction.commit();
      if (message.kind === "prune") store.prune(message.limits);
    }
    answer({ id });
  } catch (error) {
    answer({ id, error: errorMessage(error) });
  }
});
