import { describe, expect, it } from "vitest";
import { systemClock } from "../../../../src/core/clock.js";
import { silentLogger } from "../../../../src/core/log/logger.js";
import { openPostgresBackend, postgresServerVersion } from "../../../../src/node/state/postgres/postgres-backend.js";
import { describePostgres, postgresUrlProblem } from "../../../../src/node/state/postgres/postgres-url.js";

/** Passwords whose reserved characters were left unencoded, each hiding the word "hunter". */
const MISENCODED = [
  "postgres://app:12/hunter@db.internal:5432/channel",
  "postgres://ap/p:hunter@db.internal/channel",
  "postgres://app:12#hunter@db.internal/channel",
  // A user is read, and the rest of the password as host and database, port or query.
  "postgres://app:x@hunter/more@db.internal:5432/channel",
  "postgres://app:x@hunter#more@db.internal:5432/channel",
  "postgres://app:12345?hunter@db.internal:5432/channel",
  "postgres://app:?hunter@db.internal:5432/channel",
  "postgres://app:12345?a=hunter@db.internal:5432/channel",
];

/** Forms pg reads that are no URL, or that a URL parser reads otherwise: never echoed either. */
const UNREADABLE = ["postgres://app:hun#ter@db.internal/channel", "not a url hunter"];

describe("describePostgres", () => {
  it("names host, port, database and user, never the password", () => {
    const url = "postgres://svc%40corp:p%40ss-w0rd@db.internal:6432/channel?sslmode=verify-full&sslrootcert=/ca.pem";
    const described = describePostgres(url);
    expect(described).toEqual({ host: "db.internal", port: 6432, database: "channel", user: "svc@corp" });
    expect(JSON.stringify(described)).not.toContain("w0rd");
    expect(describePostgres("postgresql://db")).toEqual({
      host: "db",
      port: 5432,
      database: "(default)",
      user: "(default)",
    });
    // Several hosts' ports, as libpq takes them, stay as written.
    expect(describePostgres("postgres://db/x?host=a,b&port=5432,5433")).toMatchObject({ port: "5432,5433" });
  });
});

describe("postgresUrlProblem", () => {
  it.each([
    "postgres://app:p%2Fss%23w%3Frd%40x@db.internal:6432/channel",
    "postgresql://db",
    "postgres:///channel?host=/var/run/postgresql",
    "postgres://app:sec@ret@db/channel",
    // pg's own forms and URLs with an "@" where no credentials are: not for this check to refuse.
    "postgresql://app@/channel?host=/var/run/postgresql&port=5432",
    "/var/run/postgresql channel",
    "postgresql://127.0.0.1:5432/channel?user=app&application_name=ops@h1",
    "postgresql://:secret@db/channel?user=app",
  ])("reads %s", (url) => {
    expect(postgresUrlProblem(url)).toBeUndefined();
  });

  it.each(MISENCODED)("names how to fix %s without echoing it", (url) => {
    const problem = postgresUrlProblem(url);
    expect(problem).toContain(
      "percent-encode reserved characters in the user name, the password and the database name",
    );
    expect(problem).not.toContain("hunter");
  });

  it.each(MISENCODED)("a start and a preflight on %s say why, without the password", async (url) => {
    const start = openPostgresBackend(url, silentLogger, systemClock);
    await expect(start).rejects.toThrow(/^cannot open the postgres state: the URL cannot be read: /);
    const message = await start.catch((error: unknown) => String(error));
    expect(message).not.toContain("hunter");
    const version = postgresServerVersion(url);
    await expect(version).rejects.toThrow(/percent-encode/);
    expect(await version.catch((error: unknown) => String(error))).not.toContain("hunter");
  });

  it.each(UNREADABLE)("a start on %s fails as pg fails, never naming the password", async (url) => {
    const message = await openPostgresBackend(url, silentLogger, systemClock).then(
      () => "started",
      (error: unknown) => String(error),
    );
    expect(message).toMatch(/^Error: cannot open the postgres state \(a connection string that is not a URL/);
    expect(message).not.toContain("hunter");
  });
});
