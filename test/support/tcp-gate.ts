import { createConnection, createServer, type Server, type Socket } from "node:net";

/** A TCP proxy on 127.0.0.1 whose traffic a test can hold up and let through again. */
export interface TcpGate {
  /** Where to connect instead of the upstream. */
  readonly port: number;
  /** Stops passing bytes either way, on every connection, open or to come. */
  hold(): void;
  /** Passes bytes again, those held first. */
  release(): void;
  close(): Promise<void>;
}

/** Starts a {@link TcpGate} in front of `host:port`, passing bytes until held. */
export async function startTcpGate(host: string, port: number): Promise<TcpGate> {
  const sockets = new Set<Socket>();
  let held = false;
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    if (held) socket.pause();
  };
  const server: Server = createServer((client) => {
    const upstream = createConnection({ host, port });
    // Piped before they are tracked: `pipe` resumes its source, which would let a connection
    // opened while the gate holds pass bytes.
    client.pipe(upstream);
    upstream.pipe(client);
    track(client);
    track(upstream);
    // A side that closed is half-closed on the other once what it sent is through, as a network
    // delivers the bytes it held before the FIN: a query sent before a client gave up still runs.
    client.on("close", () => upstream.end());
    upstream.on("close", () => client.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("the gate has no port");
  return {
    port: address.port,
    hold() {
      held = true;
      for (const socket of sockets) socket.pause();
    },
    release() {
      held = false;
      for (const socket of sockets) socket.resume();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** A {@link TcpGate} in front of the server of `url` (a `postgres://` URL, say), and `url` through it. */
export async function gateInFront(url: string): Promise<{ gate: TcpGate; url: string }> {
  const target = new URL(url);
  const gate = await startTcpGate(target.hostname, Number(target.port));
  const through = new URL(url);
  through.hostname = "127.0.0.1";
  through.port = String(gate.port);
  return { gate, url: through.toString() };
}
