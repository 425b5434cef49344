import { DEFAULT_CONFIG_PATH, serviceHelp } from "../node/parse-service-args.js";

/**
 * How help and hints spell the command. In a clone the bin is not on PATH, but `npx` finds
 * the package's own bin there as well as in a project that installed it.
 */
export const CLI = "npx webhook-channel";

/** The overview printed by `--help`, `help` and a usage error outside any command. */
export const USAGE = `usage: ${CLI} <command> [options]

  serve [--config <file>] [--bind <host:port>]    start the service
  config check [--preflight] [[--config] <file>]  validate a configuration file
  dead-letters list [--json] [--config <file> | --url <base URL>]
                                                  show the dead letters (state_dir or admin API)
  dead-letters show --id <id> [--json] [--config <file> | --url <base URL>]
                                                  show one dead letter in full
  dead-letters replay (--id <id>... | --all) [--config <file> | --url <base URL>]
                                                  re-queue dead letters
  dead-letters delete --id <id>... [--config <file> | --url <base URL>]
                                                  forget dead letters
  messages show <id> [--json] [--config <file> | --url <base URL>]
                                                  show one message's timeline: where it is
  messages list [--conversation <id>] [--channel <name>] [--status <s>] [--since <time>]
                [--limit n] [--cursor c] [--all] [--json] [--config <file> | --url <base URL>]
                                                  list messages, newest first
  secret                                          print a new random inbound secret
  keypair                                         print a new Ed25519 signing key (whsk_), and
                                                  its public key (whpk_) on stderr
  public-key [--env <NAME>]                       print the whpk_ public key of a signing key
  schema                                          print the configuration's JSON Schema

<file> is ${DEFAULT_CONFIG_PATH} when not given. ${CLI} <command> --help tells more;
${CLI} --version prints the version.
`;

const CONFIG_CHECK = `usage: ${CLI} config check [--preflight] [--config <file> | <file>]

Validates a configuration file and prints each problem with its JSON path and a fix.
Exit 0 when it is usable (warnings allowed), 1 when problems were found, 2 on a usage error.

options:
  -c, --config <file>  the file to check, also accepted as the only argument
                       (default ${DEFAULT_CONFIG_PATH})
      --preflight      also confirm that every variable the file names (the *_env keys) is
                       set and usable, in the environment or in a .dev.vars file beside it
  -h, --help           print this help
`;

/** The options that point a command at a running service, their text from `column` on. */
function remoteOptions(column: number): string {
  const pad = " ".repeat(column);
  return `      --url <base URL>
${pad}a running service's admin API (e.g. http://127.0.0.1:8090) instead of
${pad}the state the file names; needs admin.token_env in its configuration
      --admin-token-env <NAME>
${pad}the variable holding the admin secret (default WEBHOOK_ADMIN_SECRET)`;
}

/** {@link remoteOptions} for the helps whose texts start at the usual column. */
const REMOTE_OPTIONS = remoteOptions(23);

const DEAD_LETTERS_LIST = `usage: ${CLI} dead-letters list [--json] [--config <file> | --url <base URL>]

Shows the dead letters kept in state_dir or Postgres (or, with --url, those of a running
service), oldest first: a table for people (times in UTC), or with --json one JSON object per
line from state_dir, the admin API's {"items":[...],"next_cursor":null} with --url or
postgres_url_env. Exit 0, or 1 when the configuration names no state or the service cannot be
asked.

options:
  -c, --config <file>  configuration file naming state_dir or postgres_url_env
                       (default ${DEFAULT_CONFIG_PATH})
      --json           one JSON object per dead letter and line: id, channel, conversation_id,
                       message_id, failed_at, attempts, stage, error, message, replies
${REMOTE_OPTIONS}
  -h, --help           print this help
`;

const DEAD_LETTERS_SHOW = `usage: ${CLI} dead-letters show --id <id> [--json] [--config <file> | --url <base URL>]

Shows one dead letter: its table line and the whole item, or with --json the item alone (the
admin API's JSON). Exit 0, or 1 when there is no dead letter with this id.

options:
      --id <id>        the dead letter's id, as dead-letters list shows it
      --json           the item only, on one line
  -c, --config <file>  configuration file naming state_dir or postgres_url_env
                       (default ${DEFAULT_CONFIG_PATH})
${REMOTE_OPTIONS}
  -h, --help           print this help
`;

const DEAD_LETTERS_DELETE = `usage: ${CLI} dead-letters delete --id <id>... [--config <file> | --url <base URL>]

Forgets dead letters for good. Exit 0, or 1 when an id was not found.

options:
      --id <id>        a dead letter's id, as dead-letters list shows it; repeatable
  -c, --config <file>  configuration file naming state_dir or postgres_url_env
                       (default ${DEFAULT_CONFIG_PATH})
${REMOTE_OPTIONS}
  -h, --help           print this help
`;

const DEAD_LETTERS_REPLAY = `usage: ${CLI} dead-letters replay (--id <id>... | --all) [--config <file> | --url <base URL>]

Re-queues dead letters with fresh attempts; replies the brain already gave keep their ids and
the brain is not asked again. A running service picks them up within a second, as far as
the channel's queue has room; a stopped one at its next start. Exit 0, or 1 when an id was
not found or nothing was re-queued.

options:
      --id <id>        a dead letter's id, as dead-letters list shows it; repeatable
      --all            every dead letter
      --json           with --url: print the admin API's {"replayed":n}
  -c, --config <file>  configuration file naming state_dir or postgres_url_env
                       (default ${DEFAULT_CONFIG_PATH})
${REMOTE_OPTIONS}
  -h, --help           print this help
`;

const DEAD_LETTERS = `usage:
  ${CLI} dead-letters list [--json] [--config <file> | --url <base URL>]
  ${CLI} dead-letters show --id <id> [--json] [--config <file> | --url <base URL>]
  ${CLI} dead-letters replay (--id <id>... | --all) [--config <file> | --url <base URL>]
  ${CLI} dead-letters delete --id <id>... [--config <file> | --url <base URL>]

Dead letters are messages or replies that exhausted their attempts; they are kept in state_dir,
or, with admin.token_env, in the running service's memory and reachable with --url. See
${CLI} dead-letters <action> --help.
`;

const MESSAGES_SHOW = `usage: ${CLI} messages show <id> [--json] [--config <file> | --url <base URL>]

Shows one message's timeline: its channel, conversation and status, why it waits while it has
not ended (the receiver is down, the brain is paused, an attempt failed, behind another message
of its conversation, or queued), then one line per event, oldest first: its time in UTC, how
long after acceptance, its type and its facts (brain calls, replies, POST attempts with their
HTTP status and duration, retries, how it ended, replays). With --json, the admin API's JSON
(GET /admin/messages/<id>). Exit 0, or 1 when no message with this id is in the timeline (never
accepted, or older than the timeline keeps) or the source cannot be read.

options:
      --json           the admin API's JSON, on one line
  -c, --config <file>  configuration file naming state_dir or postgres_url_env, read without a
                       running service (default ${DEFAULT_CONFIG_PATH})
${REMOTE_OPTIONS}
  -h, --help           print this help
`;

const MESSAGES_LIST = `usage: ${CLI} messages list [--conversation <id>] [--channel <name>] [--status <s>]
         [--since <time>] [--limit n] [--cursor c] [--all] [--json] [--config <file> | --url <base URL>]

Lists messages from the timeline, newest first, one page at a time: a table for people (times
in UTC; the count, and the command for the next page, on stderr), or with --json the admin
API's page {"items":[...],"next_cursor":...}. Exit 0, or 1 when no message matches or the
source cannot be read.

options:
      --conversation <id>  only this conversation's messages
      --channel <name>     only this channel's messages
      --status <s>         only messages now in this status: accepted, retrying, waiting,
                           delivered, dead_letter or replayed
      --since <time>       only messages accepted at or after this time: ISO 8601
                           (2026-11-27T04:00:00Z; UTC without an offset; a date, 2026-11-27,
                           for its midnight UTC) or epoch milliseconds
      --limit <n>          messages per page, 1 to 500 (default 100; 500 with --all)
      --cursor <c>         the page after the one that printed this next_cursor
      --all                every page to the end (--json then prints them as one page
                           with "next_cursor":null)
      --json               the admin API's JSON, on one line
  -c, --config <file>      configuration file naming state_dir or postgres_url_env, read
                           without a running service (default ${DEFAULT_CONFIG_PATH})
${remoteOptions(27)}
  -h, --help               print this help
`;

const MESSAGES = `usage:
  ${CLI} messages show <id> [--json] [--config <file> | --url <base URL>]
  ${CLI} messages list [filters] [--cursor c | --all] [--json] [--config <file> | --url <base URL>]

Where is a message: the timeline the service keeps of each message (timeline in the
configuration), read from a running service's admin API (--url) or from state_dir or the
Postgres database (--config). See ${CLI} messages <action> --help.
`;

const CONFIG = `usage: ${CLI} config check [--preflight] [--config <file> | <file>]

See ${CLI} config check --help.
`;

const SECRET = `usage: ${CLI} secret

Prints a new random inbound secret (32 random bytes, base64url) for a channel's token_env:
  export WEBHOOK_SECRET="$(${CLI} secret)"
It is not an API key of a model provider, nor a signing secret or key (see keypair).

options:
  -h, --help  print this help
`;

const KEYPAIR = `usage: ${CLI} keypair

Makes a new Ed25519 key pair for Standard Webhooks v1a signatures (webhook.signing_key_env).
Prints the whsk_ secret key on stdout, for the variable, and the whpk_ public key on stderr,
for the receiver, which verifies with it and can never sign:
  export WEBHOOK_SIGNING_KEY="$(${CLI} keypair)"
${CLI} public-key prints the public key again later.

options:
  -h, --help  print this help
`;

const PUBLIC_KEY = `usage: ${CLI} public-key [--env <NAME>]

Prints the whpk_ public key of each whsk_ key the variable holds (two while rotating), one per
line, in the variable's order. The variable may be given as a file, <NAME>_FILE, as the
service reads it. Exit 1 when it is unset or holds something else. Never prints the secret key.

options:
      --env <NAME>  the variable holding the key (default WEBHOOK_SIGNING_KEY)
  -h, --help        print this help
`;

const SCHEMA = `usage: ${CLI} schema

Prints the JSON Schema of the configuration file (what config.schema.json holds).

options:
  -h, --help  print this help
`;

/** Help per command, keyed by the command words (`"config check"`). */
export const COMMAND_HELP: Readonly<Record<string, string>> = {
  serve: serviceHelp(`${CLI} serve`),
  config: CONFIG,
  "config check": CONFIG_CHECK,
  "dead-letters": DEAD_LETTERS,
  "dead-letters list": DEAD_LETTERS_LIST,
  "dead-letters show": DEAD_LETTERS_SHOW,
  "dead-letters replay": DEAD_LETTERS_REPLAY,
  "dead-letters delete": DEAD_LETTERS_DELETE,
  messages: MESSAGES,
  "messages show": MESSAGES_SHOW,
  "messages list": MESSAGES_LIST,
  secret: SECRET,
  keypair: KEYPAIR,
  "public-key": PUBLIC_KEY,
  schema: SCHEMA,
};
