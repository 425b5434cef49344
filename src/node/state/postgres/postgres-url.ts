/**
 * Why `url` would be misread as a Postgres connection URL, or `undefined`. Never echoes the
 * URL: a password with a `/`, `?` or `#` left unencoded ends the user part early, so that the
 * rest of the password is read as a host, a port, the database or the query, and printed as
 * such. What shows it: an `@` in the path or the fragment (a database name holding one is
 * written `%40`), or in a query parameter's name, or before a `/` in its value. pg's own forms
 * that are no URL (a socket path, `user@/db?host=/socket`) are pg's to read.
 */
export function postgresUrlProblem(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const parsed = new URL(url);
  const misread =
    parsed.pathname.includes("@") ||
    parsed.hash.includes("@") ||
    parsed.search
      .slice(1)
      .split("&")
      .some((pair) => {
        const at = pair.indexOf("=");
        const [name, value] = at === -1 ? [pair, ""] : [pair.slice(0, at), pair.slice(at + 1)];
        return name.includes("@") || /@[^/]*\//.test(value);
      });
  if (!misread) return undefined;
  return "an \"@\" stands where a password's or a database name's would: percent-encode reserved characters in the user name, the password and the database name (/ as %2F, # as %23, ? as %3F, @ as %40)";
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
