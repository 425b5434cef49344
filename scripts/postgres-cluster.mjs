// A private Postgres cluster from Debian's `postgresql` binaries, for the tests (through
// test/support/postgres-cluster.ts) and the bench (bench/postgres.mjs): `initdb` into a
// temporary folder and `pg_ctl start` on a free loopback port. `initdb` refuses to run as root,
// so as root the cluster runs as the `postgres` user (which the Debian package creates).
import { execFile } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { chmod, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
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
 * `settings` are more `name=value` server settings (the bench's
 * `shared_preload_libraries=pg_stat_statements`).
 */
export async function startPostgresCluster({ durable = false, settings: extra = [] } = {}) {
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
    ...extra.map((setting) => `-c ${setting}`),
  ].join(" ");
  const start = () => runAs(join(bin, "pg_ctl"), ["-D", data, "-o", settings, "-l", join(dir, "log"), "-w", "start"]);
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    halt: () => runAs(join(bin, "pg_ctl"), ["-D", data, "-m", "fast", "-w", "stop"]),
    resume: start,
    async freeze() {
      // The postmaster first, so that it forks no backend while the others are found and stopped.
      const { postmaster } = await clusterProcesses(data, false);
      process.kill(postmaster, "SIGSTOP");
      const { children } = await clusterProcesses(data);
      for (const pid of children) process.kill(pid, "SIGSTOP");
    },
    /** The postmaster's id and its children's, for the bench's CPU accounting. */
    processes: () => clusterProcesses(data),
    async thaw() {
      const { postmaster, children } = await clusterProcesses(data);
      for (const pid of [postmaster, ...children]) process.kill(pid, "SIGCONT");
    },
    async stop() {
      await runAs(join(bin, "pg_ctl"), ["-D", data, "-m", "immediate", "-w", "stop"]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The cluster's processes: the postmaster (from `postmaster.pid`) and every process it started
 * (backends, checkpointer, WAL writer...). They call setsid, so a signal to the postmaster's
 * process group would leave them running: each is signalled by its own id.
 */
async function clusterProcesses(data, withChildren = true) {
  const postmaster = Number((await readFile(join(data, "postmaster.pid"), "utf8")).split("\n")[0]);
  const children = [];
  if (!withChildren) return { postmaster, children };
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    // The fields after the command's closing parenthesis: state, then the parent's id.
    const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    if (parent === postmaster) children.push(Number(entry));
  }
  return { postmaster, children };
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
