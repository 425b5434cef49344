import type { Hono } from "hono";
import { shuttingDownError } from "../app/refusals.js";
import { ChannelError } from "../channel-error.js";
import { isConsoleAsset } from "../console/console-paths.js";
import { mountConsoleRoutes } from "../console/console-routes.js";
import { checkDeclaredLength, readLimitedBody } from "../http/body-limit.js";
import { problemResponse } from "../http/problem-response.js";
import { bearerMatches, unauthorizedError } from "../http/request-checks.js";
import type { TimelineAdmin } from "../timeline/timeline-admin.js";
import { holdsNoNul, invalid, methodNotAllowed, parseLimit, queryText } from "./admin-problems.js";
import type { AdminDeadLetters } from "./dead-letter-admin.js";
import { decodeCursor } from "./dead-letter-cursor.js";
import { mountMessageRoutes } from "./message-routes.js";
import type { StatusSource } from "./status-report.js";

/** What the admin API is built from. */
export interface AdminDeps {
  /** The admin secret, asked per request; never a channel's (preflight refuses that). */
  readonly secret: () => string;
  readonly deadLetters: AdminDeadLetters;
  /** What `GET /admin/status` (and the console's live view) reports. */
  readonly status: StatusSource;
  /** Every message's timeline and the last hour's activity; undefined when the timeline is off. */
  readonly timeline?: TimelineAdmin | undefined;
}

/** A bulk replay body is a channel and ids: 64 KiB is thousands of ids. */
const MAX_REPLAY_BODY = 65_536;

const LIST = "/admin/dead-letters";
/** The bulk replay's path: the one admin route that reads a request body. */
export const BULK_REPLAY = "/admin/dead-letters/replay";
const ONE = "/admin/dead-letters/:id";
const ONE_REPLAY = "/admin/dead-letters/:id/replay";
const STATUS = "/admin/status";

/**
 * Mounts `/admin/status`, `/admin/dead-letters` and its sub-routes on `app`, all behind the
 * admin Bearer secret (checked before anything else, so an unauthenticated caller learns
 * nothing, not even which paths exist), and the operator console, whose page and files alone
 * are served without it: they hold no data, and the page asks for the secret. While the
 * service stops (`isShuttingDown`), replays are refused with 503 `shutting_down`.
 */
export function mountAdminRoutes(app: Hono, deps: AdminDeps, isShuttingDown: () => boolean = () => false): void {
  const { deadLetters } = deps;
  // A replay during a stop would be put on a queue that no longer runs: in memory it would be
  // lost with the process, unnamed. It is refused; the next start takes it.
  const notStopping = (): void => {
    if (isShuttingDown()) throw shuttingDownError();
  };
  app.use("/admin/*", async (c, next) => {
    if (isConsoleAsset(c.req.method, c.req.path)) {
      await next();
      return undefined;
    }
    // bearerMatches compares in constant time, like the channels' check.
    if (!bearerMatches(c.req.header("authorization") ?? null, [deps.secret()])) {
      return problemResponse(unauthorizedError(), {
        "www-authenticate": 'Bearer realm="admin"',
        "cache-control": "no-store",
      });
    }
    await next();
    // Dead letters and timelines hold message text: no cache keeps a copy of any admin answer.
    if (!c.res.headers.has("cache-control")) c.res.headers.set("cache-control", "no-store");
    return undefined;
  });
  mountConsoleRoutes(app);

  app.get(STATUS, async (c) => c.json(await deps.status.report(), 200, { "cache-control": "no-store" }));
  app.all(STATUS, () => methodNotAllowed("GET, HEAD"));
  mountMessageRoutes(app, deps.timeline);

  app.get(LIST, async (c) => {
    const limit = parseLimit(c.req.query("limit"));
    const channel = queryText(c.req.query("channel"), "channel");
    const cursor = c.req.query("cursor");
    // A cursor this service did not make would silently restart the list from the beginning,
    // and a script following next_cursor would never end.
    if (cursor !== undefined && cursor !== "" && decodeCursor(cursor) === undefined) {
      throw invalid("cursor", "must be a next_cursor this API returned");
    }
    const page = await deadLetters.list({
      limit,
      ...(channel === undefined ? {} : { channel }),
      ...(cursor === undefined || cursor === "" ? {} : { cursor }),
    });
    return c.json({ items: page.items, next_cursor: page.nextCursor });
  });
  app.all(LIST, () => methodNotAllowed("GET, HEAD"));

  app.post(BULK_REPLAY, async (c) => {
    notStopping();
    const filter = parseReplayBody(await readLimitedBody(c.req.raw, MAX_REPLAY_BODY));
    // Again once the body is in: a stop that began while it arrived refuses it as well.
    notStopping();
    return c.json({ replayed: await deadLetters.replay(filter) }, 202);
  });
  app.all(BULK_REPLAY, () => methodNotAllowed("POST"));

  app.post(ONE_REPLAY, async (c) => {
    notStopping();
    const id = c.req.param("id");
    if (!holdsNoNul(id) || (await deadLetters.replay({ ids: [id] })) === 0) return problemResponse(unknownLetter(id));
    return c.json({ replayed: 1 }, 202);
  });
  app.all(ONE_REPLAY, () => methodNotAllowed("POST"));

  app.get(ONE, async (c) => {
    const id = c.req.param("id");
    const item = holdsNoNul(id) ? await deadLetters.get(id) : undefined;
    return item === undefined ? problemResponse(unknownLetter(id)) : c.json(item);
  });
  app.delete(ONE, async (c) => {
    const id = c.req.param("id");
    return holdsNoNul(id) && (await deadLetters.delete(id)) ? c.body(null, 204) : problemResponse(unknownLetter(id));
  });
  app.all(ONE, () => methodNotAllowed("GET, HEAD, DELETE"));
}

/**
 * Whether a bulk replay that waits for `100 Continue` (`Expect: 100-continue`) will have its body
 * read: it carries the admin secret and declares no more than the route reads. Any other is
 * answered (401, 413) from its head alone, so it is not invited to send a body.
 */
export function takesReplayBody(authorization: string | null, contentLength: string | null, secret: string): boolean {
  if (!bearerMatches(authorization, [secret])) return false;
  try {
    checkDeclaredLength(contentLength, MAX_REPLAY_BODY);
    return true;
  } catch {
    return false;
  }
}

/** The optional `{"channel", "ids"}` of a bulk replay; an empty body replays everything. */
function parseReplayBody(bytes: Uint8Array): { channel?: string; ids?: readonly string[] } {
  const text = new TextDecoder().decode(bytes).trim();
  if (text === "") return {};
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    throw invalid("", "must be a JSON object with optional channel and ids");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalid("", "must be a JSON object with optional channel and ids");
  }
  // A misspelled key (`chanel`, `id`) would otherwise replay every letter of every channel.
  const unknown = Object.keys(body).filter((key) => key !== "channel" && key !== "ids");
  if (unknown.length > 0) {
    throw invalid(unknown[0] ?? "", "is not a key of a replay: only channel and ids are (an empty body replays all)");
  }
  const { channel, ids } = body as { channel?: unknown; ids?: unknown };
  if (channel !== undefined && typeof channel !== "string") throw invalid("channel", "must be a string");
  if (ids !== undefined && !(Array.isArray(ids) && ids.every((id) => typeof id === "string"))) {
    throw invalid("ids", "must be an array of strings");
  }
  if (channel !== undefined && !holdsNoNul(channel))
    throw invalid("channel", "must not contain the character U+0000 (NUL)");
  if (ids?.every(holdsNoNul) === false) throw invalid("ids", "must not contain the character U+0000 (NUL)");
  return {
    ...(channel === undefined ? {} : { channel }),
    ...(ids === undefined ? {} : { ids: ids as string[] }),
  };
}

function unknownLetter(id: string): ChannelError {
  return new ChannelError("not_found", `No dead letter has the id ${JSON.stringify(id)}.`, { status: 404 });
}
