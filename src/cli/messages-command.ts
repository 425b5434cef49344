import { parseArgs } from "node:util";
import { shellWord } from "../core/shell-word.js";
import { DEFAULT_CONFIG_PATH } from "../node/parse-service-args.js";
import { adminSecretFrom, DEFAULT_ADMIN_TOKEN_ENV } from "./admin-client.js";
import type { CliIo } from "./cli-io.js";
import { runMessagesAction } from "./messages-actions.js";
import { messagesRequest } from "./messages-request.js";
import { openStateTimeline } from "./messages-state-source.js";
import { checkServiceUrl, serviceCallError } from "./service-url.js";
import { createTimelineClient } from "./timeline-client.js";
import { UsageError } from "./usage-error.js";

/**
 * `messages show <id>` and `messages list [--conversation <id>] [--channel <name>] [--status <s>]
 * [--since <time>] [--limit n] [--cursor c] [--all]`, each with `--json`, reading the timeline of
 * a running service (`--url <base URL>`, secret from `--admin-token-env`) or of a configuration's
 * state (`--config <file>`: `state_dir` or the Postgres database of `postgres_url_env`). Exit 0
 * when something was found, 1 when not or when the source cannot be read; a usage error throws
 * {@link UsageError}.
 */
export async function runMessages(args: readonly string[], io: CliIo): Promise<number> {
  const [action, ...rest] = args;
  if (action !== "show" && action !== "list") {
    throw new UsageError(action === undefined ? "missing one of show, list" : `unknown action 'messages ${action}'`);
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      config: { type: "string", short: "c" },
      url: { type: "string" },
      "admin-token-env": { type: "string" },
      json: { type: "boolean", default: false },
      conversation: { type: "string" },
      channel: { type: "string" },
      status: { type: "string" },
      since: { type: "string" },
      limit: { type: "string" },
      cursor: { type: "string" },
      all: { type: "boolean", default: false },
    },
    strict: true,
    allowPositionals: true,
  });
  const request = messagesRequest(action, values, positionals);
  if (values.url !== undefined && values.config !== undefined) throw new UsageError("give either --url or --config");
  if (values.url === undefined && values["admin-token-env"] !== undefined) {
    throw new UsageError("--admin-token-env goes with --url");
  }
  if (values.url !== undefined) {
    checkServiceUrl(values.url);
    const variable = values["admin-token-env"] ?? DEFAULT_ADMIN_TOKEN_ENV;
    const secret = adminSecretFrom(io, variable);
    if (secret === undefined) return 1;
    const source = [
      "--url",
      shellWord(values.url),
      ...(values["admin-token-env"] === undefined ? [] : ["--admin-token-env", shellWord(variable)]),
    ];
    try {
      return await runMessagesAction(createTimelineClient(values.url, secret, io.adminTimeoutMs), request, io, source);
    } catch (error) {
      io.err(serviceCallError(values.url, error));
      return 1;
    }
  }
  const file = values.config ?? DEFAULT_CONFIG_PATH;
  let state: Awaited<ReturnType<typeof openStateTimeline>>;
  try {
    state = await openStateTimeline(file, request, io);
  } catch (error) {
    io.err(`${file}: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  if (state === undefined) return 1;
  try {
    return await runMessagesAction(
      state.admin,
      request,
      io,
      values.config === undefined ? [] : ["--config", shellWord(file)],
    );
  } catch (error) {
    io.err(`${state.where}: ${state.describe(error)}\n`);
    return 1;
  } finally {
    await state.close();
  }
}
