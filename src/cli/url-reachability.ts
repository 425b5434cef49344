import { connect } from "node:net";
import type { ConfigProblem } from "../core/config/config-problem.js";
import type { UrlReference } from "../core/config/preflight/url-references.js";

/** How long a preflight waits for one address to take a connection. */
const CONNECT_TIMEOUT_MS = 3_000;

/** What trying one URL's address found. */
export type Reachability =
  | { readonly ok: true; readonly address: string }
  | { readonly ok: false; readonly address: string; readonly reason: string };

/** `host:port` of an http(s) URL, the port its scheme implies when it names none. */
export function addressOf(url: URL): { host: string; port: number; text: string } {
  const host = url.hostname.replace(/^\[(.+)\]$/, "$1");
  const port = url.port === "" ? (url.protocol === "https:" ? 443 : 80) : Number(url.port);
  return { host, port, text: `${url.hostname}:${port}` };
}

/**
 * Opens a TCP connection to the URL's host and port and closes it at once: nothing is sent, so
 * the server sees a connection and no request. Says why it could not (the name does not resolve,
 * refused, no answer within the time limit). TLS is not tried: a private CA or a client
 * certificate it would need are the service's to present.
 */
export function tryAddress(url: string, timeoutMs = CONNECT_TIMEOUT_MS): Promise<Reachability> {
  const { host, port, text } = addressOf(new URL(url));
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (result: Reachability): void => {
      socket.destroy();
      resolve(result);
    };
    socket.setTimeout(timeoutMs, () =>
      done({ ok: false, address: text, reason: `no answer within ${timeoutMs / 1000} s` }),
    );
    socket.once("connect", () => done({ ok: true, address: text }));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      done({ ok: false, address: text, reason: error.code ?? error.message }),
    );
  });
}

/**
 * Tries every URL's address once (in parallel, each address once however many keys name it),
 * and returns a note for each one that took a connection and a warning for each one that did
 * not. A warning, not a problem: a receiver or a model server may start after the service, which
 * retries until it answers.
 */
export async function urlReachability(
  references: readonly UrlReference[],
  timeoutMs = CONNECT_TIMEOUT_MS,
): Promise<{ notes: string[]; warnings: ConfigProblem[] }> {
  const tried = new Map<string, Promise<Reachability>>();
  for (const { url } of references) {
    const key = addressOf(new URL(url)).text;
    if (!tried.has(key)) tried.set(key, tryAddress(url, timeoutMs));
  }
  const notes: string[] = [];
  const warnings: ConfigProblem[] = [];
  for (const { path, url } of references) {
    const found = await (tried.get(addressOf(new URL(url)).text) ?? tryAddress(url, timeoutMs));
    if (found.ok) notes.push(`${path}: ${found.address} takes connections from this machine`);
    else {
      warnings.push({
        path,
        message: `cannot connect to ${found.address} from this machine (${found.reason})`,
        fix: "start the server there, or correct the URL; until it answers, the service keeps retrying what it sends there",
      });
    }
  }
  return { notes, warnings };
}
