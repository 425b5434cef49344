/**
 * Why `url` cannot be read as a Postgres connection URL, or `undefined` when it can. Never
 * echoes the URL: a password with a reserved character left unencoded ends the user part early,
 * so that part of the password would be read as a host, a port or the database name.
 */
export function postgresUrlProblem(url: string): string | undefined {
  const fix =
    "percent-encode reserved characters in the user name and password (/ as %2F, # as %23, ? as %3F, @ as %40)";
  if (!URL.canParse(url)) return `it is not a URL of the form postgres://user:password@host:port/database; ${fix}`;
  const parsed = new URL(url);
  if (parsed.username === "" && url.includes("@")) {
    return `its user name and password end before the "@" that should close them; ${fix}`;
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
