/**
 * A value as one POSIX shell word, for the commands the service prints for people to paste
 * (a dead letter's replay command, the CLI's hints): as it is when no shell would split,
 * expand or glob it, else in single quotes.
 */
export function shellWord(value: string): string {
  return /^[\w./:@%+=-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`;
}
