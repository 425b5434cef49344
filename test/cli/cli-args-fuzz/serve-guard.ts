import { parseServiceArgs } from "../../../src/node/parse-service-args.js";

/** What running a line does as far as the service goes. */
export type ServeVerdict = "runs" | "would start the service" | "would start the service though -h asks for help";

/**
 * Whether `runCli` would start the service for `argv` (a long-running listener on the file's
 * bind), which the fuzz never runs: as run-cli.ts decides, `--help` or `-h` as a word on the
 * line prints the help, else a line `parseServiceArgs` reads without `--version` starts it.
 * A `-h` grouped with other short options (`-hc <file>`) asks `parseServiceArgs` for help, but
 * run-cli.ts does not look at its `help`: such lines are told apart, for the summary.
 */
export function serveVerdict(argv: readonly string[]): ServeVerdict {
  if (argv[0] !== "serve") return "runs";
  const rest = argv.slice(1);
  if (rest.includes("--help") || rest.includes("-h")) return "runs";
  let parsed: ReturnType<typeof parseServiceArgs>;
  try {
    parsed = parseServiceArgs(rest);
  } catch {
    return "runs";
  }
  if (parsed.version) return "runs";
  return parsed.help ? "would start the service though -h asks for help" : "would start the service";
}
