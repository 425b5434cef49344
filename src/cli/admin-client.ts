import { addressableId } from "../core/admin/addressable-id.js";
import type { AdminDeadLetters } from "../core/admin/dead-letter-admin.js";
import type { DeadLetterItem } from "../core/admin/dead-letter-item.js";
import { ChannelError, errorMessage } from "../core/channel-error.js";
import { envValueProblem } from "../core/config/preflight/preflight.js";
import { createSecretEnv } from "../node/secret-env.js";
import type { CliIo } from "./cli-io.js";

/** The environment variable the CLI reads the admin secret from when `--admin-token-env` is not given. */
export const DEFAULT_ADMIN_TOKEN_ENV = "WEBHOOK_ADMIN_SECRET";

/**
 * The admin secret `--url` commands send, from `variable` (or the file `<variable>_FILE` names,
 * as the service reads it); undefined, with the reason on stderr
 * (never the value), when it is unset or could not travel in an Authorization header (a
 * trailing newline from a file, say: fetch would refuse the header and quote it).
 */
export function adminSecretFrom(io: Pick<CliIo, "env" | "err">, variable: string): string | undefined {
  let secret: string | undefined;
  try {
    // As the service reads it: `<NAME>_FILE` when the variable itself is unset.
    secret = createSecretEnv(io.env)(variable);
  } catch (error) {
    io.err(`${errorMessage(error)}\n`);
    return undefined;
  }
  const problem = secret === undefined || secret === "" ? "is not set" : envValueProblem(secret);
  if (problem === undefined) return secret;
  io.err(`environment variable ${variable} ${problem}: it must hold the service's admin secret (admin.token_env)\n`);
  return undefined;
}

/** An answer of the admin API that was not the one expected, with its problem's detail. */
export class AdminApiError extends Error {}

/**
 * How long a `--url` command waits for each answer of the admin API, body included: well past
 * the service's own bounds (its store's queries give up within seconds), so that only a service
 * that is frozen, or an address that takes connections and never answers, reaches it.
 */
export const ADMIN_CALL_TIMEOUT_MS = 30_000;

/**
 * `fetch` with its whole answer read within `timeoutMs`: a service that never answers, or stops
 * half-way through its body, is an {@link AdminApiError} saying so, instead of a wait without end.
 */
export async function fetchAdmin(url: string, init: RequestInit, timeoutMs: number): Promise<Response> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
    const body = await response.arrayBuffer();
    return new Response(body.byteLength === 0 ? null : body, {
      status: response.status,
      headers: response.headers,
    });
  } catch (error) {
    if (error instanceof Error && error.name === "TimeoutError") {
      throw new AdminApiError(
        `no answer within ${timeoutMs / 1000} s: is the service running, and is this the address of one of its listeners?`,
      );
    }
    throw error;
  }
}

/**
 * The admin API of a running service (`--url`), as the same port the routes serve, so the
 * CLI acts alike on a running service and on a stopped one's state_dir.
 */
export function createAdminClient(
  baseUrl: string,
  secret: string,
  timeoutMs = ADMIN_CALL_TIMEOUT_MS,
): AdminDeadLetters {
  const base = baseUrl.replace(/\/+$/, "");
  const call = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const headers: Record<string, string> = { authorization: `Bearer ${secret}` };
    if (body !== undefined) headers["content-type"] = "application/json";
    return await fetchAdmin(
      `${base}/admin/dead-letters${path}`,
      { method, headers, ...(body === undefined ? {} : { body: JSON.stringify(body) }) },
      timeoutMs,
    );
  };
  const expect = async (response: Response, ...ok: number[]): Promise<Response> => {
    if (ok.includes(response.status)) return response;
    throw new AdminApiError(`${response.status} from the admin API: ${await problemDetail(response)}`);
  };
  const one = (id: string) => `/${encodeURIComponent(id)}`;
  return {
    async list(query) {
      const params = new URLSearchParams({ limit: String(query.limit) });
      if (query.channel !== undefined) params.set("channel", query.channel);
      if (query.cursor !== undefined) params.set("cursor", query.cursor);
      const response = await expect(await call("GET", `?${params.toString()}`), 200);
      const page = (await response.json()) as { items: DeadLetterItem[]; next_cursor: string | null };
      return { items: page.items, nextCursor: page.next_cursor };
    },
    async get(id) {
      if (!addressableId(id)) return undefined;
      const response = await expect(await call("GET", one(id)), 200, 404);
      return response.status === 404 ? undefined : ((await response.json()) as DeadLetterItem);
    },
    async replay(filter) {
      // One id at a time for --id, so that the CLI can name each unknown one.
      if (filter.ids !== undefined && filter.ids.length === 1 && filter.ids[0] !== undefined) {
        if (!addressableId(filter.ids[0])) return 0;
        const response = await expect(await call("POST", `${one(filter.ids[0])}/replay`), 202, 404, 409);
        // A letter of a channel the service no longer has: the same refusal as offline, for the
        // caller to name the letter and go on with the next.
        if (response.status === 409) {
          throw new ChannelError("channel_not_configured", await problemDetail(response), { status: 409 });
        }
        return response.status === 404 ? 0 : 1;
      }
      const response = await expect(await call("POST", "/replay", filter), 202);
      return ((await response.json()) as { replayed: number }).replayed;
    },
    async delete(id) {
      if (!addressableId(id)) return false;
      const response = await expect(await call("DELETE", one(id)), 204, 404);
      return response.status === 204;
    },
  };
}

/** The detail of a problem+json answer, else the start of its text. */
export async function problemDetail(response: Response): Promise<string> {
  const text = await response.text();
  try {
    const problem = JSON.parse(text) as { detail?: unknown; title?: unknown };
    return String(problem.detail ?? problem.title ?? text);
  } catch {
    return text.slice(0, 200);
  }
}
