// A private Postgres cluster from Debian's `postgresql` binaries, for the tests (through
// test/support/postgres-cluster.ts) and the bench (bench/postgres.mjs): `initdb` into a
// temporary folder and `pg_ctl start` on a free loopback port. `initdb` refuses to run as root,
// so as root the cluster runs as the `postgres` user (which the Debian package creates).
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";

const run = promisify(execFile);

/** The folder of `initdb` and `pg_ctl`: Debian keeps them out of PATH, per major version. */
export function postgresBinDir() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], "bin");
}

/** Runs a Postgres binary, as `postgres` when this process is root. */
async function runAs(binary, args) {
  const asRoot = process.getuid?.() === 0;
  const [file, argv] = asRoot ? ["runuser", ["-u", "postgres", "--", binary, ...args]] : [binary, [...args]];
  await run(file, argv, { timeout: 60_000 });
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a cluster with trust authentication for the user `postgres`. `durable: false` (the
 * tests) turns fsync off: a killed service loses nothing either way, only a machine crash would.
 * The bench keeps Postgres's defaults (`durable: true`), as a production server has them.
 */
export async function startPostgresCluster({ durable = false } = {}) {
  const bin = postgresBinDir();
  if (bin === undefined) {
    throw new Error(
      "Postgres is not installed (Debian package postgresql): npm run test:tools installs it, or sudo apt-get install -y postgresql",
    );
  }
  const dir = await mkdtemp(join(tmpdir(), "webhook-channel-pg-"));
  // The postgres user must own the data folder and reach the socket folder.
  await chmod(dir, 0o777);
  const data = join(dir, "data");
  if (process.getuid?.() === 0) await run("install", ["-d", "-o", "postgres", "-m", "700", data]);
  await runAs(join(bin, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const port = await freePort();
  const settings = [
    `-p ${port}`,
    "-c listen_addresses=127.0.0.1",
    `-c unix_socket_directories=${dir}`,
    "-c max_connections=200",
    ...(durable ? [] : ["-c fsync=off", "-c full_page_writes=off"]),
  ].join(" ");
  const start = () => runAs(join(bin, "pg_ctl"), ["-D", data, "-o", settings, "-l", join(dir, "log"), "-w", "start"]);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    halt: () => runAs(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]),
    resume: start,
    async stop() {
      await runAs(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Creates the empty database `name` in the cluster of `clusterUrl`; returns its URL. */
export async function createDatabase(clusterUrl, name) {
  const client = new pg.Client({ connectionString: clusterUrl });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(clusterUrl);
  url.pathname = `/${name}`;
  return url.toString();
}
