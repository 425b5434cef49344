import { errorMessage } from "../../core/channel-error.js";
import type { Logger } from "../../core/log/logger.js";
import { startOtelTelemetry } from "./otel-telemetry.js";
import type { Telemetry } from "./telemetry.js";
import { readTelemetrySettings } from "./telemetry-settings.js";

/** How a thread starts its telemetry. */
export interface TelemetryStart {
  /**
   * Whether this start logs what it decided (on, or why not). The main thread does; the
   * delivery thread, which reads the same environment, stays quiet rather than repeat it.
   */
  readonly announce: boolean;
}

/**
 * Starts OpenTelemetry trace export when the standard variables ask for it (see
 * `readTelemetrySettings`), else answers undefined and nothing of the SDK is loaded. The
 * environment is the process's own: the SDK reads the rest of its `OTEL_*` variables there.
 * Telemetry never stops the service: an SDK that cannot start is logged and left off.
 */
export async function startTelemetry(
  logger: Logger,
  { announce }: TelemetryStart,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Telemetry | undefined> {
  const settings = readTelemetrySettings(env);
  if (!settings.on) {
    if (announce && settings.warning !== undefined) logger.warn(`telemetry: ${settings.warning}`);
    return undefined;
  }
  try {
    const telemetry = await startOtelTelemetry(settings.protocol, logger, env);
    if (announce) {
      logger.info("telemetry: exporting traces over OTLP", {
        endpoint: settings.endpoint,
        protocol: settings.protocol,
      });
    }
    return telemetry;
  } catch (error) {
    logger.error("telemetry: cannot start the OpenTelemetry SDK; no traces are exported", {
      error: errorMessage(error),
    });
    return undefined;
  }
}
