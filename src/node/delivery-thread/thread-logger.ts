import { createLevelLogger, type Logger, type LogLevel } from "../../core/log/logger.js";
import type { FromDeliveryThread } from "./delivery-thread-messages.js";

/**
 * The delivery thread's logger: lines below `minLevel` are dropped where they are made, the
 * rest go to the main thread's logger, so the service keeps one writer and one format.
 */
export function createThreadLogger(send: (message: FromDeliveryThread) => void, minLevel: LogLevel): Logger {
  return createLevelLogger(
    (level, msg, fields) =>
      send(
        fields === undefined
          ? { kind: "log", level, msg }
          : { kind: "log", level, msg, fields: JSON.stringify(fields) },
      ),
    minLevel,
  );
}
