import type { Hono } from "hono";
import { ChannelError } from "../channel-error.js";
import { problemResponse } from "../http/problem-response.js";
import type { TimelineAdmin } from "../timeline/timeline-admin.js";
import { MESSAGE_STATUSES, type MessageStatus } from "../timeline/timeline-event.js";
import { holdsNoNul, invalid, methodNotAllowed, parseLimit, queryText } from "./admin-problems.js";
import { decodeCursor } from "./dead-letter-cursor.js";
import { parseInstant } from "./parse-instant.js";

const LIST = "/admin/messages";
const ONE = "/admin/messages/:id";
const ACTIVITY = "/admin/activity";

/**
 * Mounts the timeline's routes: `GET /admin/messages/{id}` (one message's timeline),
 * `GET /admin/messages` (a page of messages, newest first) and `GET /admin/activity` (the
 * last hour a minute at a time). The admin secret is checked before these run. With the
 * timeline off (`timeline` is undefined), each answers 404 saying so.
 */
export function mountMessageRoutes(app: Hono, timeline: TimelineAdmin | undefined): void {
  app.get(LIST, async (c) => {
    const admin = timelineOrRefuse(timeline);
    const limit = parseLimit(c.req.query("limit"));
    const cursor = nonEmpty(c.req.query("cursor"));
    if (cursor !== undefined && decodeCursor(cursor) === undefined) {
      throw invalid("cursor", "must be a next_cursor this API returned");
    }
    const page = await admin.list({
      limit,
      cursor,
      channel: queryText(c.req.query("channel"), "channel"),
      conversationId: queryText(c.req.query("conversation_id"), "conversation_id"),
      status: parseStatus(nonEmpty(c.req.query("status"))),
      since: parseSince(nonEmpty(c.req.query("since"))),
    });
    return c.json({ items: page.items, next_cursor: page.nextCursor }, 200, { "cache-control": "no-store" });
  });
  app.all(LIST, () => methodNotAllowed("GET, HEAD"));

  app.get(ONE, async (c) => {
    const id = c.req.param("id");
    const admin = timelineOrRefuse(timeline);
    const view = holdsNoNul(id) ? await admin.get(id) : undefined;
    if (view === undefined) return problemResponse(unknownMessage(id));
    return c.json(view, 200, { "cache-control": "no-store" });
  });
  app.all(ONE, () => methodNotAllowed("GET, HEAD"));

  app.get(ACTIVITY, async (c) =>
    c.json(await timelineOrRefuse(timeline).activity(), 200, { "cache-control": "no-store" }),
  );
  app.all(ACTIVITY, () => methodNotAllowed("GET, HEAD"));
}

function timelineOrRefuse(timeline: TimelineAdmin | undefined): TimelineAdmin {
  if (timeline !== undefined) return timeline;
  throw new ChannelError(
    "not_found",
    "The message timeline is off (timeline.retention_hours or timeline.max_messages is 0 in the configuration).",
    { status: 404 },
  );
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

function parseStatus(raw: string | undefined): MessageStatus | undefined {
  if (raw === undefined) return undefined;
  const status = MESSAGE_STATUSES.find((known) => known === raw);
  if (status !== undefined) return status;
  throw invalid("status", `must be one of ${MESSAGE_STATUSES.join(", ")}`);
}

/** `since` as ISO 8601 or epoch ms. */
function parseSince(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const ms = parseInstant(raw);
  if (ms !== undefined) return ms;
  throw invalid(
    "since",
    'must be an ISO 8601 date or time, UTC unless it gives an offset (e.g. "2026-11-27T04:00:00Z"), or epoch milliseconds',
  );
}

function unknownMessage(id: string): ChannelError {
  return new ChannelError(
    "not_found",
    `No message with the id ${JSON.stringify(id)} is in the timeline: it was never accepted here, it is older than the timeline keeps, or it was accepted a moment ago and its first events are still being written.`,
    { status: 404 },
  );
}
