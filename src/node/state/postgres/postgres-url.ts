/**
 * Why `url` would be misread as a Postgres connection URL, or `undefined`. Never echoes the
 * URL: a password with a `/` or `#` left unencoded ends the user part early, so that part of
 * the password would be read as a host, a port or the database name, and printed as such.
 * pg's own forms that are no URL (a socket path, `user@/db?host=/socket`) are pg's to read.
 */
export function postgresUrlProblem(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  const credentials = parsed.username !== "" || parsed.password !== "";
  if (!credentials && (parsed.pathname.includes("@") || parsed.hash.includes("@"))) {
    return 'its user name and password end before the "@" that should close them: percent-encode reserved characters in the user name and password (/ as %2F, # as %23, ? as %3F, @ as %40)';
  }
  return undefined;
}

/** Throws, without the URL, when {@link postgresUrlProblem} finds one. */
export function assertReadablePostgresUrl(url: string): void {
  const problem = postgresUrlProblem(url);
  if (problem !== undefined) throw new Error(`the postgres URL cannot be read: ${problem}`);
}

/**
 * Where `url` points, safe to log: host, port, database and user, never the password (nor
 * the query string, whose TLS file paths say nothing an operator needs here). Read as
 * pg-connection-string reads it: `host`, `port`, `user` and `dbname` parameters win.
 */
export function describePostgres(url: string): Readonly<Record<string, string | number>> {
  if (!URL.canParse(url)) return { host: "(invalid url)" };
  const parsed = new URL(url);
  const param = (name: string): string | undefined => parsed.searchParams.get(name) ?? undefined;
  const decode = (text: string): string => {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  };
  return {
    host: param("host") ?? (decode(parsed.hostname.replace(/^\[(.+)\]$/, "$1")) || "localhost"),
    port: portOf(param("port") ?? (parsed.port || "5432")),
    database: param("dbname") ?? (decode(parsed.pathname.slice(1)) || "(default)"),
    user: param("user") ?? (decode(parsed.username) || "(default)"),
  };
}

function portOf(text: string): string | number {
  return /^\d{1,5}$/.test(text) ? Number(text) : text;
}
