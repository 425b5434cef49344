/**
 * The client side of the proxy recipes' tests: HTTPS requests to a proxy as a client of
 * hooks.example.com makes them (SNI and Host), trusting only the test's self-signed certificate,
 * and messages of an exact size for the body limit.
 */
import type { IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { expect } from "vitest";

/** The service's webhook secret behind the proxies. */
export const SECRET = "proxies-secret-0123456789";
/** The host name the recipes serve, and the test's certificate names. */
export const HOST = "hooks.example.com";
export const MIB = 1_048_576;

/** A proxy's answer, its body read whole. */
export interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** One request to send to a proxy. */
export interface Sent {
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
  /** The client's own address (a loopback one, 127.0.0.0/8), to be another client. */
  readonly localAddress?: string;
}

/**
 * One HTTPS request to a proxy, as a client of hooks.example.com would make it (SNI and Host),
 * trusting only `ca`, the test's self-signed certificate.
 */
export function send(port: number, ca: string, sent: Sent): Promise<Answer> {
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
        ca,
        method: sent.method ?? "GET",
        path: sent.path,
        headers,
        agent: false,
        timeout: 15_000,
        ...(sent.localAddress === undefined ? {} : { localAddress: sent.localAddress }),
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

/** A message POSTed to the webhook path with the service's secret, through the proxy on `port`. */
export function postMessage(port: number, ca: string, body: string, extra: Partial<Sent> = {}): Promise<Answer> {
  return send(port, ca, {
    method: "POST",
    path: "/webhook",
    headers: { authorization: `Bearer ${SECRET}`, "content-type": "application/json", ...extra.headers },
    body,
    ...(extra.chunked === undefined ? {} : { chunked: extra.chunked }),
    ...(extra.bodyAfterMs === undefined ? {} : { bodyAfterMs: extra.bodyAfterMs }),
    ...(extra.localAddress === undefined ? {} : { localAddress: extra.localAddress }),
  });
}

/** A valid message of exactly `bytes` bytes: the text is padded to fit. */
export function messageOfSize(bytes: number, sender: string): string {
  const head = `{"sender_id":"${sender}","text":"`;
  const tail = `"}`;
  const body = `${head}${"x".repeat(bytes - Buffer.byteLength(head) - Buffer.byteLength(tail))}${tail}`;
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}
