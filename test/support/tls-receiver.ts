import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import type { TestPki } from "./test-pki.js";

/** One reply that reached the TLS receiver, with the subject of the certificate its client presented. */
export interface TlsDelivery {
  readonly clientCn: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
}

/** A running HTTPS receiver that accepts only clients with a certificate from the test CA. */
export interface TlsReceiver {
  readonly url: string;
  readonly deliveries: TlsDelivery[];
  /** Handshakes it refused (a client without a certificate, or with one it does not trust). */
  readonly refused: string[];
  close(): Promise<void>;
}

/** Starts the receiver on 127.0.0.1, port 0: `requestCert` and `rejectUnauthorized` against the test CA. */
export async function startTlsReceiver(pki: TestPki): Promise<TlsReceiver> {
  const deliveries: TlsDelivery[] = [];
  const refused: string[] = [];
  const server: Server = createServer(
    { cert: pki.serverCert, key: pki.serverKey, ca: pki.caCert, requestCert: true, rejectUnauthorized: true },
    (request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        const peer = (request.socket as TLSSocket).getPeerCertificate();
        deliveries.push({
          clientCn: String(peer.subject?.CN ?? ""),
          body: Buffer.concat(chunks).toString(),
          headers: request.headers,
        });
        response.writeHead(200, { "content-type": "application/json" });
        response.end("{}");
      });
    },
  );
  server.on("tlsClientError", (error) => refused.push(error.message));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/replies`,
    deliveries,
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
