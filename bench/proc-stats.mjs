// Memory of a child process, read from /proc (Linux only). VmHWM is the kernel's own peak
// RSS, so short spikes between two samples are not missed.
import { readFileSync, writeFileSync } from "node:fs";

function statusField(pid, field) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status);
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    // The process is gone or /proc is missing (not Linux): the caller shows "n/a".
    return null;
  }
}

/** Current resident set size in bytes, or null. */
export const currentRss = (pid) => statusField(pid, "VmRSS");

/** Peak resident set size in bytes since start (or since the last resetPeakRss), or null. */
export const peakRss = (pid) => statusField(pid, "VmHWM");

/**
 * Resets the kernel's peak-RSS mark so that the next peakRss covers only what follows
 * (writing 5 to clear_refs, Linux 4.0+). Returns false when that is not permitted.
 */
export function resetPeakRss(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Bytes as MiB with one decimal, or "n/a". */
export const mib = (bytes) => (bytes === null || bytes === undefined ? "n/a" : (bytes / 1_048_576).toFixed(1));
