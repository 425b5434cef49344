// The programs the test commands need besides Node, one table for all of them: which command
// needs which program, and which Debian package has it. Each test command checks its own
// first (`node scripts/test-tools.mjs <suite>`) and fails, naming what is missing and how to
// install it, the same way for every program; `npm run test:tools` (`--install all`) installs
// what is missing with apt-get, as root or through sudo without a password, and otherwise says
// what to install and fails. The test files use the same table (test/support/test-tools.ts),
// so running vitest directly fails the same way.
import { spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync } from "node:fs";
import { delimiter, join } from "node:path";
import { pathToFileURL } from "node:url";

/** Every suite, by the command that runs it. */
export const SUITES = {
  test: "npm test",
  proxies: "npm run test:proxies",
  browser: "npm run test:browser",
  image: "npm run test:image",
};

/** Debian keeps Postgres's binaries out of PATH, in a folder per major version. */
function postgresInitdb() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const found = readdirSync(root).find((version) => existsSync(join(root, version, "bin", "initdb")));
  return found === undefined ? undefined : join(root, found, "bin", "initdb");
}

/** Where a program is on PATH, or in the sbin folders a user's PATH may lack (nginx is there). */
export function locate(name) {
  const folders = [...(process.env.PATH ?? "").split(delimiter), "/usr/local/sbin", "/usr/sbin", "/sbin"];
  for (const folder of folders) {
    if (folder === "") continue;
    try {
      accessSync(join(folder, name), constants.X_OK);
      return join(folder, name);
    } catch {
      // Not in this folder.
    }
  }
  return undefined;
}

/**
 * The programs, what each is for, the Debian package that has it and the suites that need it.
 * `find` gives its path, or undefined when it is not installed: on PATH unless said otherwise.
 */
export const TOOLS = [
  {
    name: "initdb",
    package: "postgresql",
    suites: ["test", "browser"],
    why: "a private Postgres cluster for the postgres_url_env tests",
    find: postgresInitdb,
  },
  { name: "promtool", package: "prometheus", suites: ["test"], why: "checks /metrics and docs/alerts.yml" },
  { name: "openssl", package: "openssl", suites: ["test", "proxies"], why: "makes the certificates of the TLS tests" },
  { name: "systemd-analyze", package: "systemd", suites: ["test"], why: "verifies deploy/webhook-channel.service" },
  { name: "nginx", package: "nginx", suites: ["proxies"], why: "runs deploy/nginx.conf" },
  { name: "caddy", package: "caddy", suites: ["proxies"], why: "runs deploy/Caddyfile" },
  {
    name: "chromium",
    package: "chromium",
    suites: ["browser"],
    why: "drives the operator console",
    find: () => (existsSync("/usr/bin/chromium") ? "/usr/bin/chromium" : undefined),
  },
  { name: "buildah", package: "buildah", suites: ["image"], why: "builds and runs the Containerfile" },
  {
    name: "mmdebstrap",
    package: "mmdebstrap",
    suites: ["image"],
    why: "makes the base image from Debian packages (no registry is needed)",
  },
].map((tool) => ({ find: () => locate(tool.name), ...tool }));

/** The tools `suites` need that are not installed. */
export function missingTools(suites) {
  return TOOLS.filter((tool) => tool.suites.some((suite) => suites.includes(suite)) && tool.find() === undefined);
}

/** What to say about `missing`: each program, what for, its package, and the two ways to install them. */
export function missingMessage(command, missing) {
  const packages = [...new Set(missing.map((tool) => tool.package))];
  const width = Math.max(...missing.map((tool) => tool.name.length));
  return [
    `${command} needs programs that are not installed:`,
    ...missing.map((tool) => `  ${tool.name.padEnd(width)}  ${tool.why} (Debian package ${tool.package})`),
    "Install them with: npm run test:tools   (apt-get, as root or with sudo)",
    `              or: sudo apt-get install -y --no-install-recommends ${packages.join(" ")}`,
  ].join("\n");
}

/** Why apt-get cannot be run here, or undefined when it can (as root, or with sudo that asks no password). */
function installBlocker() {
  if (locate("apt-get") === undefined) return "there is no apt-get here (not Debian or Ubuntu)";
  if (process.getuid?.() === 0) return undefined;
  const sudo = spawnSync("sudo", ["-n", "true"], { stdio: "ignore" });
  return sudo.status === 0 ? undefined : "this user is not root, and sudo asks for a password (or is not installed)";
}

/** Runs apt-get (through sudo unless root); what it says goes to the terminal only when it fails. */
function aptGet(args) {
  const root = process.getuid?.() === 0;
  const [file, argv] = root ? ["apt-get", args] : ["sudo", ["-n", "apt-get", ...args]];
  const run = spawnSync(file, argv, {
    stdio: ["ignore", "pipe", "pipe"],
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  if (run.status !== 0) {
    throw new Error(`apt-get ${args[0]} failed (exit ${run.status ?? run.signal}):\n${run.stdout}${run.stderr}`);
  }
}

/** Installs what `suites` miss; throws with the message and the reason when it cannot. */
function install(command, suites) {
  const missing = missingTools(suites);
  if (missing.length === 0) return;
  const blocker = installBlocker();
  if (blocker !== undefined)
    throw new Error(`${missingMessage(command, missing)}\nnpm run test:tools cannot install them: ${blocker}.`);
  const packages = [...new Set(missing.map((tool) => tool.package))];
  process.stdout.write(`test-tools: installing ${packages.join(" ")} (apt-get)\n`);
  aptGet(["update", "-qq"]);
  aptGet(["install", "-y", "-qq", "--no-install-recommends", ...packages]);
  const still = missingTools(suites);
  if (still.length > 0)
    throw new Error(`${missingMessage(command, still)}\napt-get installed them, yet they are still missing.`);
}

function main(args) {
  const installing = args[0] === "--install";
  const names = installing ? args.slice(1) : args;
  const suites = names.includes("all") ? Object.keys(SUITES) : names;
  const unknown = suites.filter((suite) => !(suite in SUITES));
  if (suites.length === 0 || unknown.length > 0) {
    process.stderr.write(
      `usage: node scripts/test-tools.mjs [--install] <${[...Object.keys(SUITES), "all"].join("|")}>...\n`,
    );
    return 2;
  }
  const command = suites.map((suite) => SUITES[suite]).join(", ");
  try {
    if (installing) install(command, suites);
    else {
      const missing = missingTools(suites);
      if (missing.length > 0) throw new Error(missingMessage(command, missing));
    }
  } catch (error) {
    process.stderr.write(`test-tools: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  }
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) process.exitCode = main(process.argv.slice(2));
