/**
 * The programs of the proxy recipes' tests: nginx and Caddy started on deploy/nginx.conf and
 * deploy/Caddyfile as they are, with only the machine-specific parts swapped (the listening port,
 * the certificate and the service's port), all their files in the test's temporary folder; and
 * the self-signed certificate, made by openssl, that they serve.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { requireTool } from "../support/test-tools.js";
import { HOST, send } from "./https-client.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Where a program the recipes need is; fails the file, naming it and how to install it, when it is missing. */
export function findProgram(name: string): string {
  return requireTool(name, "proxies");
}

/** `text` with `from` replaced by `to`; fails when `from` is gone, so the recipe and this test agree. */
function swap(text: string, from: string, to: string, file: string): string {
  if (!text.includes(from)) {
    throw new Error(`${file} no longer contains ${JSON.stringify(from)}: update test/proxies/proxy-processes.ts`);
  }
  return text.replaceAll(from, to);
}

/** A started proxy process with its output kept for failure messages. */
export interface ProxyProcess {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly output: () => string;
}

function startProcess(
  name: string,
  port: number,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv,
): ProxyProcess {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { name, port, child, output: () => output };
}

/**
 * Makes a self-signed certificate for hooks.example.com in `temp` (cert.pem, key.pem), valid two
 * days, and returns it (PEM), for the proxies to serve and the client to trust.
 */
export function makeCertificate(temp: string): string {
  const openssl = findProgram("openssl");
  execFileSync(
    openssl,
    [
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${HOST}`,
      "-addext",
      `subjectAltName=DNS:${HOST}`,
      "-keyout",
      join(temp, "key.pem"),
      "-out",
      join(temp, "cert.pem"),
    ],
    { stdio: "ignore" },
  );
  return readFileSync(join(temp, "cert.pem"), "utf8");
}

/** Starts nginx on the documented site configuration, in the foreground, all files in `temp`. */
export function startNginx(temp: string, port: number, tapPort: number): ProxyProcess {
  const file = "deploy/nginx.conf";
  let site = readFileSync(join(root, file), "utf8");
  site = swap(site, "listen 443 ssl;", `listen 127.0.0.1:${port} ssl;`, file);
  site = swap(site, "listen [::]:443 ssl;", "", file);
  site = swap(site, `/etc/letsencrypt/live/${HOST}/fullchain.pem`, join(temp, "cert.pem"), file);
  site = swap(site, `/etc/letsencrypt/live/${HOST}/privkey.pem`, join(temp, "key.pem"), file);
  site = swap(site, "server 127.0.0.1:8090;", `server 127.0.0.1:${tapPort};`, file);
  const prefix = join(temp, "nginx");
  mkdirSync(prefix);
  writeFileSync(join(prefix, "site.conf"), site);
  // What /etc/nginx/nginx.conf gives a site on Debian, with every path in the temporary folder.
  // One process in the foreground (no master, no daemon), so that stopping it stops all of nginx.
  writeFileSync(
    join(prefix, "nginx.conf"),
    [
      "master_process off;",
      "daemon off;",
      `pid ${join(prefix, "nginx.pid")};`,
      `error_log ${join(prefix, "error.log")} info;`,
      "events { worker_connections 256; }",
      "http {",
      `  access_log ${join(prefix, "access.log")};`,
      ...["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map(
        (kind) => `  ${kind}_temp_path ${join(prefix, `${kind}-temp`)};`,
      ),
      `  include ${join(prefix, "site.conf")};`,
      "}",
      "",
    ].join("\n"),
  );
  const nginx = findProgram("nginx");
  return startProcess(
    "nginx",
    port,
    nginx,
    ["-p", prefix, "-c", join(prefix, "nginx.conf"), "-e", join(prefix, "error.log")],
    { PATH: process.env.PATH },
  );
}

/** Starts Caddy on the documented Caddyfile, its state and configuration kept in `temp`. */
export function startCaddy(temp: string, port: number, tapPort: number): ProxyProcess {
  const file = "deploy/Caddyfile";
  let site = readFileSync(join(root, file), "utf8");
  site = swap(
    site,
    `${HOST} {`,
    `${HOST}:${port} {\n\tbind 127.0.0.1\n\ttls ${join(temp, "cert.pem")} ${join(temp, "key.pem")}`,
    file,
  );
  site = swap(site, "reverse_proxy 127.0.0.1:8090", `reverse_proxy 127.0.0.1:${tapPort}`, file);
  const home = join(temp, "caddy");
  mkdirSync(home);
  // Global options for a test run: no admin endpoint (port 2019 may be taken), no redirect
  // listener on port 80, no certificate authority installed anywhere.
  const options = [
    "{",
    "\tadmin off",
    "\tauto_https disable_redirects",
    `\tstorage file_system ${join(home, "data")}`,
    "\tskip_install_trust",
    "}",
    "",
  ].join("\n");
  // The recipe's own global options (no redirect) joined by the test run's.
  site = swap(site, "{\n\tauto_https disable_redirects\n}\n\n", options, file);
  writeFileSync(join(home, "Caddyfile"), site);
  const caddy = findProgram("caddy");
  return startProcess("caddy", port, caddy, ["run", "--config", join(home, "Caddyfile"), "--adapter", "caddyfile"], {
    PATH: process.env.PATH,
    HOME: home,
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
  });
}

/** Waits until `/healthz` answers 200 through the proxy (trusting `ca`), or fails with the proxy's output. */
export async function ready(proxy: ProxyProcess, ca: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = "";
  while (Date.now() < deadline) {
    if (proxy.child.exitCode !== null) {
      throw new Error(`${proxy.name} exited with status ${proxy.child.exitCode}:\n${proxy.output()}`);
    }
    try {
      const answer = await send(proxy.port, ca, { path: "/healthz" });
      if (answer.status === 200) return;
      last = `status ${answer.status}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${proxy.name} did not serve /healthz within 20 s (${last}):\n${proxy.output()}`);
}

/** Stops a child process: SIGTERM, then SIGKILL if it is still there after 5 s. */
export async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}
