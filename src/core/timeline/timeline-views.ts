import { ACTIVITY_WINDOW_MS, latencyBucketOf, MINUTE_MS, minuteOf, quantileOf } from "./activity-series.js";
import { waitsForPausedBrain } from "./settlement-events.js";
import type { MessageStatus, TimelineEvent } from "./timeline-event.js";
import type { ActivityCount, StoredTimeline, TimelineSummary } from "./timeline-store.js";

/** Why a message that has not ended is not moving, as `GET /admin/messages/{id}` says. */
export interface WaitingView {
  readonly reason: "in_progress" | "receiver_down" | "brain_paused" | "retry" | "behind_message" | "queued";
  readonly behind_message_id?: string;
  readonly until?: string;
}

/** A row of `GET /admin/messages`. */
export interface MessageSummaryView {
  readonly message_id: string;
  readonly channel: string;
  readonly conversation_id: string;
  readonly status: MessageStatus;
  readonly accepted_at: string;
  readonly updated_at: string;
}

/** `GET /admin/messages/{id}`: a row with its events and, while it has not ended, why it waits. */
export interface MessageTimelineView extends MessageSummaryView {
  readonly waiting?: WaitingView;
  readonly events: readonly Readonly<Record<string, unknown>>[];
}

/** One minute of `GET /admin/activity`. */
export interface ActivityBucketView {
  readonly start: string;
  readonly accepted: number;
  readonly delivered: number;
  readonly retrying: number;
  readonly dead_lettered: number;
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
}

/** Fields of an event that hold epoch ms, written as ISO 8601 by the API. */
const TIME_FIELDS = new Set(["at", "until", "next_attempt_at"]);

/** A row as the list shows it. */
export function summaryView(row: TimelineSummary): MessageSummaryView {
  return {
    message_id: row.id,
    channel: row.channel,
    conversation_id: row.conversationId,
    status: row.status,
    accepted_at: iso(row.acceptedAt),
    updated_at: iso(row.updatedAt),
  };
}

/** A message's timeline as the API shows it. */
export function timelineView(row: StoredTimeline, waiting: WaitingView | undefined): MessageTimelineView {
  return {
    ...summaryView(row),
    ...(waiting === undefined ? {} : { waiting }),
    events: row.events.map(eventView),
  };
}

/**
 * Why a message waits, from its last events: a receiver that is down, a paused brain, a retry's
 * backoff; one not run yet waits behind `ahead` (the nearest earlier message of its conversation
 * that has not ended), or in the queue. A run records its events when it ends, so one under way
 * (`running`, as the runtime that runs it knows) is said to be, whatever its last events say.
 */
export function waitingOf(row: StoredTimeline, ahead: string | undefined, running = false): WaitingView | undefined {
  if (row.status === "delivered" || row.status === "dead_letter") return undefined;
  if (running) return { reason: "in_progress" };
  const last = row.events.at(-1);
  if (last?.type === "waiting") return { reason: "receiver_down", until: iso(last.until) };
  if (last?.type === "retry") {
    const runStart = lastRunStart(row.events);
    const paused = waitsForPausedBrain(row.events.filter((event) => event.at >= runStart));
    return { reason: paused ? "brain_paused" : "retry", until: iso(last.next_attempt_at) };
  }
  return ahead === undefined ? { reason: "queued" } : { reason: "behind_message", behind_message_id: ahead };
}

/** When the last run began: after the last settlement before the final one. */
function lastRunStart(events: readonly TimelineEvent[]): number {
  for (let index = events.length - 2; index >= 0; index -= 1) {
    const event = events[index];
    if (event !== undefined && ["retry", "waiting", "dead_letter", "replayed", "accepted"].includes(event.type)) {
      return event.at;
    }
  }
  return 0;
}

/** One bucket a minute over the hour before `now`, oldest first, from the stored counts. */
export function activityView(counts: readonly ActivityCount[], now: number): ActivityBucketView[] {
  const first = minuteOf(now) - ACTIVITY_WINDOW_MS + MINUTE_MS;
  const minutes = new Map<number, { series: Map<string, number>; latency: Map<number, number> }>();
  for (let minute = first; minute <= now; minute += MINUTE_MS) {
    minutes.set(minute, { series: new Map(), latency: new Map() });
  }
  for (const count of counts) {
    const minute = minutes.get(count.minute);
    if (minute === undefined) continue;
    const bucket = latencyBucketOf(count.series);
    if (bucket === undefined) minute.series.set(count.series, (minute.series.get(count.series) ?? 0) + count.count);
    else minute.latency.set(bucket, (minute.latency.get(bucket) ?? 0) + count.count);
  }
  return [...minutes].map(([start, { series, latency }]) => ({
    start: iso(start),
    accepted: series.get("accepted") ?? 0,
    delivered: series.get("delivered") ?? 0,
    retrying: series.get("retrying") ?? 0,
    dead_lettered: series.get("dead_lettered") ?? 0,
    p50_ms: quantileOf(latency, 0.5),
    p99_ms: quantileOf(latency, 0.99),
  }));
}

function eventView(event: TimelineEvent): Readonly<Record<string, unknown>> {
  const view: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(event)) {
    view[key] = TIME_FIELDS.has(key) && typeof value === "number" ? iso(value) : value;
  }
  return view;
}

/** The furthest time from the epoch a JavaScript date holds, either way. */
const LAST_DATE_MS = 8.64e15;

function iso(ms: number): string {
  // A give-up time past the last date (a `max_age_ms` near its maximum) is shown as the last one.
  if (Number.isNaN(ms)) return String(ms);
  return new Date(Math.max(-LAST_DATE_MS, Math.min(LAST_DATE_MS, ms))).toISOString();
}
