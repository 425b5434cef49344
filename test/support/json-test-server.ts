import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request as a test server received it. */
export interface RecordedRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly raw: string;
  /** The parsed JSON body, or undefined when it was not JSON. */
  readonly body: unknown;
}

/** What a test server answers. `body` is sent as JSON unless `raw` is given. */
export interface TestResponse {
  readonly status: number;
  readonly body?: unknown;
  readonly raw?: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Wait this long before answering, to provoke timeouts. */
  readonly delayMs?: number;
}

/** A running test server. */
export interface JsonTestServer {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly origin: string;
  readonly port: number;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  close(): Promise<void>;
}

/**
 * A loopback HTTP server on a free port that records every request and answers what
 * `handle` says. The base of the fake brain servers the tests talk to over real HTTP.
 */
export function startJsonServer(
  handle: (request: RecordedRequest) => TestResponse | Promise<TestResponse>,
): Promise<JsonTestServer> {
  const requests: RecordedRequest[] = [];
  const timers = new Set<ReturnType<typeof setTimeout>>();
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (chunk: Buffer) => chunks.push(chunk));
    request.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: unknown;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const recorded: RecordedRequest = {
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers,
        raw,
        body,
      };
      requests.push(recorded);
      const send = (answer: TestResponse): void => {
        const text = answer.raw ?? (answer.body === undefined ? "" : JSON.stringify(answer.body));
        const headers: Record<string, string> = { ...answer.headers };
        if (answer.raw === undefined && answer.body !== undefined) headers["content-type"] ??= "application/json";
        response.writeHead(answer.status, headers);
        response.end(text);
      };
      Promise.resolve(handle(recorded)).then(
        (answer) => {
          if (answer.delayMs === undefined) send(answer);
          else {
            const timer = setTimeout(() => {
              timers.delete(timer);
              send(answer);
            }, answer.delayMs);
            timers.add(timer);
          }
        },
        (error: unknown) => send({ status: 500, body: { error: { message: String(error) } } }),
      );
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        port,
        requests,
        close: () =>
          new Promise<void>((done) => {
            for (const timer of timers) clearTimeout(timer);
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
