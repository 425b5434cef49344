import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One reply as the receiver got it. */
export interface ReceivedReply {
  readonly headers: IncomingMessage["headers"];
  readonly body: unknown;
  readonly raw: string;
}

/** A scripted answer of the receiver. */
export interface ReceiverAnswer {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/** Options of the sample receiver. */
export interface ReceiverOptions {
  readonly host?: string;
  /** 0 picks a free port. Default 8091. */
  readonly port?: number;
  /** Called for each reply received. */
  readonly onReply?: (reply: ReceivedReply) => void;
  /**
   * Answer to each reply; default 200. `"hang"` never answers, which stands for a stuck
   * receiver; an object adds headers such as `Retry-After`.
   */
  readonly status?: (reply: ReceivedReply) => number | "hang" | ReceiverAnswer;
}

/** A running receiver. */
export interface Receiver {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/**
 * A minimal outbound receiver: accepts POSTed replies and answers 200 (or what `status`
 * says). `npm run receiver` runs it on 127.0.0.1:8091 to show the round trip.
 */
export function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const host = options.host ?? "127.0.0.1";
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
      const reply: ReceivedReply = { headers: request.headers, body, raw };
      options.onReply?.(reply);
      const answer = options.status?.(reply) ?? 200;
      if (answer === "hang") return;
      const { status, headers = {} } = typeof answer === "number" ? { status: answer } : answer;
      response.writeHead(status, { "content-type": "application/json", ...headers });
      response.end(JSON.stringify({ ok: status < 300 }));
    });
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 8091, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        url: `http://${host}:${port}/replies`,
        port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
