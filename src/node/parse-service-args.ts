import { parseArgs } from "node:util";

/** The variable that stands in for `--bind` when the flag is not given (containers, systemd templates). */
export const BIND_VARIABLE = "WEBHOOK_CHANNEL_BIND";

/** Default configuration file, relative to the working directory. */
export const DEFAULT_CONFIG_PATH = "./config.json";

/** What the service's command line asks for. */
export interface ServiceArgs {
  readonly configPath: string;
  /** `--bind <host:port>`: every channel listens there instead of its configured `webhook.bind`. */
  readonly bind: string | undefined;
  /** `--help` / `-h`: print {@link serviceHelp} and exit 0, starting nothing. */
  readonly help: boolean;
  /** `--version` / `-v`: print the version and exit 0, starting nothing. */
  readonly version: boolean;
}

/** Reads `[--config <file>] [--bind <host:port>] [--help] [--version]`; throws a TypeError with a usage message on anything else. */
export function parseServiceArgs(args: readonly string[]): ServiceArgs {
  const { values } = parseArgs({
    args: [...args],
    options: {
      config: { type: "string", short: "c" },
      bind: { type: "string", short: "b" },
      help: { type: "boolean", short: "h", default: false },
      version: { type: "boolean", short: "v", default: false },
    },
    allowPositionals: false,
    strict: true,
  });
  return {
    configPath: values.config ?? DEFAULT_CONFIG_PATH,
    bind: values.bind,
    help: values.help,
    version: values.version,
  };
}

/**
 * The help of the service's command, `command` being how it was started (`node dist/node.js`
 * or `npx webhook-channel serve`), so that the usage line can be pasted back as it is.
 */
export function serviceHelp(command: string): string {
  return `usage: ${command} [--config <file>] [--bind <host:port>]

Starts the service: listens for the configured channels, runs the brains, posts the replies.
Runs until SIGTERM or SIGINT, then finishes accepted messages (up to shutdown_timeout_ms).
Exit 0 after a clean shutdown, 1 when it cannot start, 2 on a usage error.

options:
  -c, --config <file>  configuration file (default ${DEFAULT_CONFIG_PATH}); a relative
                       "state_dir" in it is relative to the file's folder
  -b, --bind <host:port>
                       every channel listens there instead of its webhook.bind (one
                       file for several replicas on one host); also ${BIND_VARIABLE}
  -h, --help           print this help
  -v, --version        print the version
`;
}
