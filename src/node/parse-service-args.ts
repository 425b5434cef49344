import { parseArgs } from "node:util";

/** Default configuration file, relative to the working directory. */
export const DEFAULT_CONFIG_PATH = "./config.json";

/** What the service's command line asks for. */
export interface ServiceArgs {
  readonly configPath: string;
  /** `--help` / `-h`: print {@link serviceHelp} and exit 0, starting nothing. */
  readonly help: boolean;
  /** `--version` / `-v`: print the version and exit 0, starting nothing. */
  readonly version: boolean;
}

/** Reads `[--config <file>] [--help] [--version]`; throws a TypeError with a usage message on anything else. */
export function parseServiceArgs(args: readonly string[]): ServiceArgs {
  const { values } = parseArgs({
    args: [...args],
    options: {
      config: { type: "string", short: "c" },
      help: { type: "boolean", short: "h", default: false },
      version: { type: "boolean", short: "v", default: false },
    },
    allowPositionals: false,
    strict: true,
  });
  return { configPath: values.config ?? DEFAULT_CONFIG_PATH, help: values.help, version: values.version };
}

/**
 * The help of the service's command, `command` being how it was started (`node dist/node.js`
 * or `npx webhook-channel serve`), so that the usage line can be pasted back as it is.
 */
export function serviceHelp(command: string): string {
  return `usage: ${command} [--config <file>]

Starts the service: listens for the configured channels, runs the brains, posts the replies.
Runs until SIGTERM or SIGINT, then finishes accepted messages (up to shutdown_timeout_ms).
Exit 0 after a clean shutdown, 1 when it cannot start, 2 on a usage error.

options:
  -c, --config <file>  configuration file (default ${DEFAULT_CONFIG_PATH}); a relative
                       "state_dir" in it is relative to the file's folder
  -h, --help           print this help
  -v, --version        print the version
`;
}
