/**
 * What a proxy recipes' test file runs against: the service (dist/node.js, echo brain) posting its
 * replies to a receiver, a tap in front of it, and nginx and Caddy on the documented recipes in
 * front of the tap, over HTTPS with a self-signed certificate. The tap, a plain Node forwarder,
 * records what reaches the service, so that the X-Forwarded-For the service gets can be checked.
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll } from "vitest";
import { type ReceivedReply, type Receiver, startReceiver } from "../../src/node/receiver/sample-receiver.js";
import { freePort } from "../support/free-port.js";
import { listeningUrl, type Spawned, spawnNode, writeTempConfig } from "../support/spawn-node.js";
import { type Answer, postMessage, SECRET, type Sent, send } from "./https-client.js";
import {
  findProgram,
  makeCertificate,
  type ProxyProcess,
  ready,
  startCaddy,
  startNginx,
  stop,
} from "./proxy-processes.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

function portOf(server: Server): number {
  const address = server.address();
  return typeof address === "object" && address !== null ? address.port : 0;
}

/** One request as it reached the service (through the tap). */
export interface Tapped {
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

/** The running stack, as the tests reach it: each proxy by name ("nginx", "caddy"). */
export interface ProxyStack {
  /** Every request that reached the service, in order. */
  readonly tapped: readonly Tapped[];
  /** Every reply the receiver got, in order. */
  readonly replies: readonly ReceivedReply[];
  /** One HTTPS request through the named proxy (see https-client.ts). */
  send(proxy: string, sent: Sent): Promise<Answer>;
  /** A message POSTed to the webhook path with the service's secret, through the named proxy. */
  postMessage(proxy: string, body: string, extra?: Partial<Sent>): Promise<Answer>;
}

/**
 * Starts the stack before the file's tests (nginx and Caddy serving /healthz) and stops it, and
 * removes its files, after them. Call it once, at the top of a test file.
 */
export function useProxyStack(): ProxyStack {
  const children: ChildProcess[] = [];
  const tapped: Tapped[] = [];
  const replies: ReceivedReply[] = [];
  const proxies = new Map<string, ProxyProcess>();
  let temp = "";
  let certificate = "";
  let receiver: Receiver | undefined;
  let service: Spawned | undefined;
  let tap: Server | undefined;

  beforeAll(async () => {
    temp = mkdtempSync(join(tmpdir(), "webhook-channel-proxies-"));
    // Fail early, and clearly, on a machine without the three programs.
    findProgram("openssl");
    findProgram("nginx");
    findProgram("caddy");
    certificate = makeCertificate(temp);

    receiver = await startReceiver({ port: 0, onReply: (reply) => replies.push(reply) });
    const config = await writeTempConfig({
      channels: [
        {
          type: "webhook",
          token_env: "WEBHOOK_SECRET",
          // As docs/deployment.md's sample: the proxy (here, the tap in front of the service) is trusted.
          webhook: {
            bind: "127.0.0.1:0",
            path: "/webhook",
            outbound_url: receiver.url,
            trusted_proxies: ["127.0.0.1/32", "::1/128"],
          },
        },
      ],
      routes: [{ channel: "webhook", brain: "echo" }],
      shutdown_timeout_ms: 2_000,
    });
    service = spawnNode(join(root, "dist/node.js"), ["--config", config], { WEBHOOK_SECRET: SECRET });
    children.push(service.child);
    const servicePort = Number(new URL(await listeningUrl(service)).port);
    tap = await startTap(servicePort, tapped);

    for (const start of [startNginx, startCaddy]) {
      const proxy = start(temp, await freePort(), portOf(tap));
      // Kept at once, so that afterAll stops it even when the next one fails to start.
      children.push(proxy.child);
      proxies.set(proxy.name, proxy);
    }
    await Promise.all([...proxies.values()].map((proxy) => ready(proxy, certificate)));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(children.splice(0).map(stop));
    tap?.closeAllConnections();
    tap?.close();
    await receiver?.close();
    if (temp !== "") rmSync(temp, { recursive: true, force: true });
  }, 30_000);

  const portOfProxy = (name: string): number => {
    const found = proxies.get(name);
    if (found === undefined) throw new Error(`${name} did not start`);
    return found.port;
  };

  return {
    tapped,
    replies,
    send: (proxy, sent) => send(portOfProxy(proxy), certificate, sent),
    postMessage: (proxy, body, extra) => postMessage(portOfProxy(proxy), certificate, body, extra),
  };
}
