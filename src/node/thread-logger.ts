import type { LogFields, Logger, LogLevel } from "../core/log/logger.js";
import type { FromDeliveryThread } from "./delivery-thread-messages.js";

const RANK: Readonly<Record<LogLevel, number>> = { debug: 0, info: 1, warn: 2, error: 3 };

/**
 * The delivery thread's logger: lines below `minLevel` are dropped where they are made, the
 * rest go to the main thread's logger, so the service keeps one writer and one format.
 */
export function createThreadLogger(send: (message: FromDeliveryThread) => void, minLevel: LogLevel): Logger {
  const min = RANK[minLevel];
  const log = (level: LogLevel) => (msg: string, fields?: LogFields) => {
    if (RANK[level] < min) return;
    send(
      fields === undefined ? { kind: "log", level, msg } : { kind: "log", level, msg, fields: JSON.stringify(fields) },
    );
  };
  return {
    debug: log("debug"),
    info: log("info"),
    warn: log("warn"),
    error: log("error"),
    enabled: (level) => RANK[level] >= min,
  };
}
