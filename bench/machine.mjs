// What the numbers were taken on: they mean little without it.
import { readFileSync } from "node:fs";
import { availableParallelism, cpus, totalmem } from "node:os";

function cpuModel() {
  try {
    const match = /^model name\s*:\s*(.+)$/m.exec(readFileSync("/proc/cpuinfo", "utf8"));
    if (match !== null) return match[1].trim();
  } catch {
    // Not Linux: fall back to what Node reports.
  }
  return cpus()[0]?.model ?? "unknown";
}

export function describeMachine() {
  return {
    cpus: availableParallelism(),
    cpuModel: cpuModel(),
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.versions.node,
    platform: `${process.platform} ${process.arch}`,
  };
}
