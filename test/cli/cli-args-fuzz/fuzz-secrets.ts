/**
 * The secret the fuzz plants where the CLI is handed one: the credentials, query and fragment of
 * `--url` values, the admin secret, signing keys, the webhook secret and the Postgres URL in the
 * environment (and in files those name). Nothing the CLI prints may ever hold it.
 */
export const SECRET_MARK = "SECRETMARK";

/** What a planted secret becomes in a word the CLI may echo back as it was typed (see `sanitize`). */
const STAND_IN = "not-a-secret";

/**
 * `word` without the planted secret: for words that land where the CLI rightly quotes what it
 * was given (an unknown action or command, a help topic, a positional), which are no secrets'
 * places, so the marker would only test the fuzz.
 */
export function sanitize(word: string): string {
  return word.replaceAll(SECRET_MARK, STAND_IN);
}

/** Words that say the CLI printed a value that is no text: never in its output unless given. */
export const NO_TEXT_WORDS = ["undefined", "[object Object]"];
