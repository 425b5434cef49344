import { connect, type Socket } from "node:net";

/** A raw TCP client of a test, for what an HTTP client library would not do (drip, stall, idle). */
export interface RawClient {
  readonly socket: Socket;
  /** When the connection was made (ms, `Date.now()`). */
  readonly connectedAt: number;
  /** Resolves with `Date.now()` when the server (or anything) closed the connection. */
  readonly closed: Promise<number>;
  /** True until the connection closed. */
  isOpen(): boolean;
  /** Everything the server sent so far. */
  received(): string;
  /** Writes `text` now, then `drip` every `everyMs` until the connection closes. */
  drip(text: string, drip: string, everyMs: number): void;
}

/** Opens a raw connection to a loopback port; resolves once connected. */
export function openRawClient(port: number, host = "127.0.0.1"): Promise<RawClient> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, host);
    let data = "";
    let open = true;
    let timer: ReturnType<typeof setInterval> | undefined;
    socket.on("data", (chunk: Buffer) => {
      data += chunk.toString("latin1");
    });
    // A reset by the server is a close like any other here.
    socket.on("error", () => undefined);
    const closed = new Promise<number>((done) =>
      socket.once("close", () => {
        open = false;
        clearInterval(timer);
        done(Date.now());
      }),
    );
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve({
        socket,
        connectedAt: Date.now(),
        closed,
        isOpen: () => open,
        received: () => data,
        drip(text, drip, everyMs) {
          socket.write(text);
          timer = setInterval(() => {
            if (open && socket.writable) socket.write(drip);
          }, everyMs);
        },
      });
    });
    socket.once("error", reject);
  });
}

/** A `POST` of `body` as bytes on the wire, with the service's usual headers and `headers` over them. */
export function rawPost(body: string, headers: Record<string, string> = {}, path = "/webhook"): string {
  const lines = Object.entries({
    host: "localhost",
    "content-type": "application/json",
    "content-length": String(Buffer.byteLength(body)),
    ...headers,
  }).map(([name, value]) => `${name}: ${value}`);
  return `POST ${path} HTTP/1.1\r\n${lines.join("\r\n")}\r\n\r\n${body}`;
}

/** The status lines of every answer received on a raw connection, in order ("HTTP/1.1 200 "). */
export const statusLines = (received: string): string[] => received.match(/HTTP\/1\.1 \d{3} /g) ?? [];
