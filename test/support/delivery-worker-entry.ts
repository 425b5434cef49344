import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

/**
 * The built delivery thread (dist/delivery-worker.js): a worker thread needs JavaScript, so
 * tests of the thread use the bundle that `npm test` builds first.
 */
export function deliveryWorkerEntry(): URL {
  const entry = new URL("../../dist/delivery-worker.js", import.meta.url);
  if (!existsSync(fileURLToPath(entry))) throw new Error("dist/delivery-worker.js is missing: run npm run build");
  return entry;
}

/** The built timeline writer thread (dist/timeline-writer.js), for the same reason. */
export function timelineWriterEntry(): URL {
  const entry = new URL("../../dist/timeline-writer.js", import.meta.url);
  if (!existsSync(fileURLToPath(entry))) throw new Error("dist/timeline-writer.js is missing: run npm run build");
  return entry;
}
