// `npm run test:proxies`: the documented proxy recipes, run for real. deploy/nginx.conf and
// deploy/Caddyfile (shown verbatim in docs/deployment.md) are started as they are, with only the
// machine-specific parts swapped: the listening port, the certificate (self-signed, made here by
// openssl) and the service's port. Between the proxy and the service sits a tap, a plain Node
// forwarder that records what reaches the service, so the X-Forwarded-For the service gets can
// be checked. Needs nginx, caddy and openssl: npm run test:proxies checks for them first, and
// npm run test:tools installs them (scripts/test-tools.mjs).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import { request as httpsRequest } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { requireTool } from "../support/test-tools.js";
import { waitFor } from "../support/wait-for.js";

const root = fileURLToPath(new URL("../../", import.meta.url));
const SECRET = "proxies-secret-0123456789";
const HOST = "hooks.example.com";
const MIB = 1_048_576;

/** Where a program the recipes need is; fails the file, naming it and how to install it, when it is missing. */
function findProgram(name: string): string {
  return requireTool(name, "proxies");
}

/** `text` with `from` replaced by `to`; fails when `from` is gone, so the recipe and this test agree. */
function swap(text: string, from: string, to: string, file: string): string {
  if (!text.includes(from)) {
    throw new Error(`${file} no longer contains ${JSON.stringify(from)}: update test/proxies/proxies.test.ts`);
  }
  return text.replaceAll(from, to);
}

/** A loopback port that was free a moment ago. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : 0));
    });
  });
}

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

/** One request as it reached the service (through the tap). */
interface Tapped {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
}

/** A forwarder in front of the service that records each request's line and headers. */
async function startTap(servicePort: number, seen: Tapped[]): Promise<Server> {
  const server = createServer((request, response) => {
    seen.push({ method: request.method ?? "", url: request.url ?? "", headers: request.headers });
    const upstream = httpRequest(
      { host: "127.0.0.1", port: servicePort, method: request.method, path: request.url, headers: request.headers },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
      },
    );
    upstream.on("error", () => {
      // The service answered early (a 413 on Content-Length) and closed while the body still flowed.
      if (!response.headersSent) response.writeHead(502);
      response.end();
    });
    request.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return server;
}

/** A started proxy process with its output kept for failure messages. */
interface Proxy {
  readonly name: string;
  readonly port: number;
  readonly child: ChildProcess;
  readonly output: () => string;
}

function startProcess(name: string, port: number, command: string, args: string[], env: NodeJS.ProcessEnv): Proxy {
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  children.push(child);
  return { name, port, child, output: () => output };
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

interface Sent {
  readonly method?: string;
  readonly path: string;
  readonly headers?: Record<string, string>;
  readonly body?: string;
  /** Send the body chunked, without Content-Length. */
  readonly chunked?: boolean;
  /**
   * Send the headers alone first and the body only if no answer comes within this many ms, as a
   * client that honours an early answer does.
   */
  readonly bodyAfterMs?: number;
}

/**
 * One HTTPS request to a proxy, as a client of hooks.example.com would make it (SNI and Host),
 * trusting only the test's self-signed certificate.
 */
function send(port: number, sent: Sent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const body = sent.body === undefined ? undefined : Buffer.from(sent.body);
    const headers: Record<string, string> = { host: `${HOST}:${port}`, ...sent.headers };
    if (body !== undefined && sent.chunked !== true) headers["content-length"] = String(body.length);
    let answered = false;
    const request = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        servername: HOST,
        ca: certificate,
        method: sent.method ?? "GET",
        path: sent.path,
        headers,
        agent: false,
        timeout: 15_000,
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
        response.on("error", reject);
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer from port ${port} within 15 s`)));
    // A proxy may answer 413 and close before the whole body is written: the answer counts.
    request.on("error", (error) => {
      if (!answered) reject(error);
    });
    if (body === undefined) request.end();
    else if (sent.bodyAfterMs !== undefined) {
      request.flushHeaders();
      const timer = setTimeout(() => request.end(body), sent.bodyAfterMs);
      request.on("response", (response) => {
        clearTimeout(timer);
        // The body is never sent: once the answer is read the connection has no more use.
        response.on("end", () => request.destroy());
      });
    } else if (sent.chunked === true) {
      // Several writes, so that the body really goes out in chunks.
      for (let at = 0; at < body.length; at += 65_536) request.write(body.subarray(at, at + 65_536));
      request.end();
    } else request.end(body);
  });
}

function postMessage(port: number, body: string, extra: Partial<Sent> = {}): Promise<Answer> {
  return send(port, {
    method: "POST",
    path: "/webhook",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json", ...extra.headers },
    body,
    ...(extra.chunked === undefined ? {} : { chunked: extra.chunked }),
    ...(extra.bodyAfterMs === undefined ? {} : { bodyAfterMs: extra.bodyAfterMs }),
  });
}

/** A valid message of exactly `bytes` bytes: the text is padded to fit. */
function messageOfSize(bytes: number, sender: string): string {
  const head = `{"sender_id":"${sender}","text":"`;
  const tail = `"}`;
  const body = `${head}${"x".repeat(bytes - Buffer.byteLength(head) - Buffer.byteLength(tail))}${tail}`;
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

const children: ChildProcess[] = [];
const tapped: Tapped[] = [];
const replies: ReceivedReply[] = [];
let temp = "";
let certificate = "";
let receiver: Receiver | undefined;
let service: Spawned | undefined;
let tap: Server | undefined;
const proxies = new Map<string, Proxy>();

/** Starts nginx on the documented site configuration, in the foreground, all files in `temp`. */
function startNginx(port: number, tapPort: number): Proxy {
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
function startCaddy(port: number, tapPort: number): Proxy {
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
  writeFileSync(join(home, "Caddyfile"), `${options}${site}`);
  const caddy = findProgram("caddy");
  return startProcess("caddy", port, caddy, ["run", "--config", join(home, "Caddyfile"), "--adapter", "caddyfile"], {
    PATH: process.env.PATH,
    HOME: home,
    XDG_DATA_HOME: join(home, "data"),
    XDG_CONFIG_HOME: join(home, "config"),
  });
}

/** Waits until `/healthz` answers 200 through the proxy, or fails with the proxy's output. */
async function ready(proxy: Proxy): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = "";
  while (Date.now() < deadline) {
    if (proxy.child.exitCode !== null) {
      throw new Error(`${proxy.name} exited with status ${proxy.child.exitCode}:\n${proxy.output()}`);
    }
    try {
      const answer = await send(proxy.port, { path: "/healthz" });
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
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
  await exited;
  clearTimeout(timer);
}

beforeAll(async () => {
  temp = mkdtempSync(join(tmpdir(), "webhook-channel-proxies-"));
  // Fail early, and clearly, on a machine without the three programs.
  const openssl = findProgram("openssl");
  findProgram("nginx");
  findProgram("caddy");
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
  certificate = readFileSync(join(temp, "cert.pem"), "utf8");

  receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
  const config = await writeTempConfig({
    channels: [
      {
        type: "webhook",
        token_env: "WEBHOOK_SECRET",
        webhook: { bind: "127.0.0.1:0", path: "/webhook", outbound_url: receiver.url },
      },
    ],
    routes: [{ channel: "webhook", brain: "echo" }],
    shutdown_timeout_ms: 2_000,
  });
  service = spawnNode(join(root, "dist/node.js"), ["--config", config], { WEBHOOK_SECRET: SECRET });
  children.push(service.child);
  const servicePort = Number(new URL(await listeningUrl(service)).port);
  tap = await startTap(servicePort, tapped);

  const started = [startNginx(await freePort(), portOf(tap)), startCaddy(await freePort(), portOf(tap))];
  for (const proxy of started) proxies.set(proxy.name, proxy);
  await Promise.all(started.map(ready));
}, 60_000);

afterAll(async () => {
  await Promise.all(children.splice(0).map(stop));
  tap?.closeAllConnections();
  tap?.close();
  await receiver?.close();
  if (temp !== "") rmSync(temp, { recursive: true, force: true });
}, 30_000);

function proxy(name: string): Proxy {
  const found = proxies.get(name);
  if (found === undefined) throw new Error(`${name} did not start`);
  return found;
}

describe.each(["nginx", "caddy"])("%s with the documented recipe, over HTTPS", (name) => {
  it("accepts a message and the reply reaches the receiver", async () => {
    const answer = await postMessage(proxy(name).port, JSON.stringify({ sender_id: `${name}-user`, text: "hi" }));
    expect(answer.status, answer.body).toBe(200);
    const { message_id } = JSON.parse(answer.body) as { message_id: string };
    const reply = await waitFor(
      () => replies.find((candidate) => (candidate.body as { in_reply_to?: string }).in_reply_to === message_id),
      10_000,
      "the reply at the receiver",
    );
    expect(reply.body).toMatchObject({ recipient_id: `${name}-user`, text: "hi" });
  });

  it("gives the service the client's address in X-Forwarded-For, not the one the client claims", async () => {
    const marker = `${name}-forwarded`;
    const answer = await postMessage(proxy(name).port, JSON.stringify({ sender_id: marker, text: "who am I" }), {
      headers: { "x-forwarded-for": "203.0.113.7", "idempotency-key": marker },
    });
    expect(answer.status, answer.body).toBe(200);
    const seen = tapped.find((request) => request.headers["idempotency-key"] === marker);
    expect(seen?.headers["x-forwarded-for"]).toBe("127.0.0.1");
    expect(seen?.headers["x-forwarded-proto"]).toBe("https");
  });

  it.each([false, true])("accepts a body of exactly 1 MiB (chunked: %s)", async (chunked) => {
    const answer = await postMessage(proxy(name).port, messageOfSize(MIB, `${name}-mib`), { chunked });
    expect(answer.status, answer.body).toBe(200);
  });

  it("refuses 1 MiB + 1 byte announced in Content-Length with 413 before the body is sent", async () => {
    // The refusal comes from the header alone. A client that sends the whole body anyway races the
    // proxy's close: the reset can reach it before the 413 it was already sent (TLS drops what is
    // unread), so this client waits for an early answer as curl does with Expect.
    const answer = await postMessage(proxy(name).port, messageOfSize(MIB + 1, `${name}-over`), {
      bodyAfterMs: 5_000,
    });
    expect(answer.status).toBe(413);
  });

  it("refuses 1 MiB + 1 byte sent chunked with 413", async () => {
    const answer = await postMessage(proxy(name).port, messageOfSize(MIB + 1, `${name}-over-chunked`), {
      chunked: true,
    });
    expect(answer.status).toBe(413);
  });

  it("serves /healthz", async () => {
    const answer = await send(proxy(name).port, { path: "/healthz" });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toEqual({ status: "ok" });
  });

  it("forwards nothing but the webhook path and /healthz", async () => {
    const answer = await send(proxy(name).port, { path: `/not-forwarded-${name}` });
    expect(answer.status).toBe(404);
    expect(tapped.filter((request) => request.url.startsWith("/not-forwarded"))).toEqual([]);
  });
});
