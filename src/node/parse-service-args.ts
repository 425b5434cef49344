import { parseArgs } from "node:util";

/** Default configuration file, relative to the working directory. */
export const DEFAULT_CONFIG_PATH = "./config.json";

/** Reads `[--config <file>]`; throws a TypeError with a usage message on anything else. */
export function parseServiceArgs(args: readonly string[]): { configPath: string } {
  const { values } = parseArgs({
    args: [...args],
    options: { config: { type: "string", short: "c" } },
    allowPositionals: false,
    strict: true,
  });
  return { configPath: values.config ?? DEFAULT_CONFIG_PATH };
}
