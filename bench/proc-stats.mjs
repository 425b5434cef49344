// Memory and CPU time of a child process, and of the whole machine, read from /proc (Linux
// only; elsewhere the bench shows "n/a"). VmHWM is the kernel's own peak RSS, so short
// spikes between two samples are not missed. CPU time per request is the number that
// survives a noisy machine: other processes can slow a server down, but they do not make
// it spend more CPU per request.
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

/** Bytes as MB (10^6, the unit of the memory target) with one decimal, or "n/a". */
export const mb = (bytes) => (bytes === null || bytes === undefined ? "n/a" : (bytes / 1e6).toFixed(1));

// The kernel's clock tick; 100 on every mainstream Linux build (getconf CLK_TCK).
const TICKS_PER_SECOND = 100;

/**
 * User + system CPU seconds the process has used so far, or null. With `withChildren`, plus
 * those of its children that have ended and been waited for (cutime, cstime).
 */
export function cpuSeconds(pid, withChildren = false) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may contain spaces.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const own = Number(fields[11]) + Number(fields[12]);
    return (withChildren ? own + Number(fields[13]) + Number(fields[14]) : own) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** CPU seconds of every process in `pids` (one service, or each replica), null when one is unknown. */
export function cpuSecondsOf(pids) {
  let total = 0;
  for (const pid of pids) {
    const seconds = cpuSeconds(pid);
    if (seconds === null) return null;
    total += seconds;
  }
  return total;
}

function machineTicks() {
  try {
    const [, ...values] = readFileSync("/proc/stat", "utf8").split("\n")[0].trim().split(/\s+/);
    const numbers = values.map(Number);
    const idle = numbers[3] + numbers[4]; // idle + iowait
    return { idle, total: numbers.reduce((sum, value) => sum + value, 0) };
  } catch {
    return null;
  }
}

/** A reading of the machine's CPU time (all cores), for {@link busyBetween}; null off Linux. */
export const machineCpu = () => machineTicks();

/** Fraction of the machine's CPU busy between two readings of {@link machineCpu}, or null. */
export function busyBetween(before, after) {
  if (before === null || after === null || after.total === before.total) return null;
  return 1 - (after.idle - before.idle) / (after.total - before.total);
}

/**
 * Fraction of the machine's CPU busy during `ms` while the bench itself does nothing: other
 * work on the box (a test run, a build) skews every number, so the report says so.
 */
export async function backgroundLoad(ms = 1_000) {
  const before = machineTicks();
  await new Promise((resolve) => setTimeout(resolve, ms));
  const after = machineTicks();
  if (before === null || after === null || after.total === before.total) return null;
  return 1 - (after.idle - before.idle) / (after.total - before.total);
}
