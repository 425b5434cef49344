import type { Server } from "node:http";
import type { AddressInfo, Server as NetServer } from "node:net";
import { errorMessage } from "../../core/channel-error.js";

/** Starts listening; resolves with the port (the one picked for port 0), or rejects saying why not. */
export function listen(server: NetServer, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => {
      const code = "code" in error ? String(error.code) : "";
      const reason =
        code === "EADDRINUSE"
          ? "the address is already in use"
          : code === "EADDRNOTAVAIL"
            ? "the host is not an address of this machine"
            : code === "EACCES"
              ? "permission denied (ports below 1024 need privileges)"
              : errorMessage(error);
      const address = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
      reject(new Error(`cannot listen on ${address}: ${reason}`));
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Closes a server: it takes no new connection, idle ones close now, and a request still being
 * read gets up to `graceMs` to arrive and be answered (a stop answers it 503 `shutting_down`,
 * closing its connection); then every connection left is cut.
 */
export function closeServer(server: Server, graceMs = 0): Promise<void> {
  return new Promise<void>((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}
