import type { IncomingMessage, RequestListener } from "node:http";
import type { AcceptMessage } from "../core/app/accept-message.js";
import { ChannelError, errorMessage, isChannelError } from "../core/errors/channel-error.js";
import { type ProblemParts, renderProblem } from "../core/http/problem-response.js";
import { MAX_BODY_BYTES, tooLarge } from "../core/http/read-limited-body.js";
import type { Logger } from "../core/log/logger.js";

/**
 * The Node fast path: `POST` to a channel path goes straight from `node:http` to the core's
 * accept flow, the same one the Hono route calls; every other request goes to `fallback`
 * (the Hono app). Building Web `Request`/`Response` objects and dispatching through Hono cost
 * about a third of the inbound throughput on Node (see bench/README.md).
 */
export function createInboundListener(
  accepts: ReadonlyMap<string, AcceptMessage>,
  fallback: RequestListener,
  logger: Logger,
): RequestListener {
  return (request, response) => {
    const url = request.url ?? "/";
    const query = url.indexOf("?");
    const accept = request.method === "POST" ? accepts.get(query === -1 ? url : url.slice(0, query)) : undefined;
    if (accept === undefined) {
      fallback(request, response);
      return;
    }
    const { headers } = request;
    accept({
      authorization: headers.authorization ?? null,
      contentType: headers["content-type"] ?? null,
      idempotencyKey: header(headers["idempotency-key"]),
      readBody: () => readBody(request, MAX_BODY_BYTES),
    }).then(
      (accepted) => {
        const body = JSON.stringify(accepted);
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
        response.end(body);
      },
      (error: unknown) => {
        let problem: ProblemParts;
        if (isChannelError(error)) problem = renderProblem(error);
        else {
          logger.error("unexpected error while handling a request", { error: errorMessage(error) });
          problem = renderProblem(new ChannelError("internal_error", "An unexpected error occurred.", { status: 500 }));
        }
        // A refused body may still be arriving: close the connection rather than read it.
        const close = !request.complete ? { connection: "close" } : {};
        response.writeHead(problem.status, { ...problem.headers, ...close });
        response.end(problem.body);
      },
    );
  };
}

function header(value: string | string[] | undefined): string | null {
  if (value === undefined) return null;
  return Array.isArray(value) ? value.join(", ") : value;
}

/**
 * Reads a body of at most `limit` bytes: a declared `Content-Length` over it fails before
 * anything is read, and the bytes actually received (chunked bodies too) are counted.
 */
function readBody(request: IncomingMessage, limit: number): Promise<Uint8Array> {
  const declared = request.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) return Promise.reject(tooLarge(limit));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let total = 0;
    const onData = (chunk: Buffer): void => {
      total += chunk.byteLength;
      if (total > limit) {
        request.off("data", onData);
        request.off("end", onEnd);
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = (): void =>
      resolve(chunks.length === 1 && chunks[0] !== undefined ? chunks[0] : Buffer.concat(chunks, total));
    request.on("data", onData);
    request.once("end", onEnd);
    request.once("error", reject);
    // A client that goes away mid-body ends the read; nothing was accepted.
    request.once("close", () => {
      if (!request.complete)
        reject(new ChannelError("invalid_json", "The request body was cut short.", { status: 400 }));
    });
  });
}
