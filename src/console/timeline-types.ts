/**
 * The answers of the timeline admin API as the console reads them: `GET /admin/messages/{id}`,
 * `GET /admin/messages` and `GET /admin/activity`. They are the core's own types (so that `tsc`
 * says when the API changes), with the events' epoch-ms times written as RFC 3339 in UTC, as the
 * API writes them.
 */
import type { TimelineEvent as StoredEvent } from "../core/timeline/timeline-event.js";
import type {
  ActivityBucketView,
  MessageSummaryView,
  MessageTimelineView,
  WaitingView,
} from "../core/timeline/timeline-views.js";

export type { MessageStatus } from "../core/timeline/timeline-event.js";

/** The fields of an event that the API writes as times. */
type TimeField = "at" | "until" | "next_attempt_at";

/** An event as the API shows it: each of its times as text. */
type ShownEvent<E> = E extends unknown ? { readonly [K in keyof E]: K extends TimeField ? string : E[K] } : never;

/** One thing that happened to a message; `type` says which. */
export type TimelineEvent = ShownEvent<StoredEvent>;

/** Why a message that has not ended waits. */
export type Waiting = WaitingView;

/** `GET /admin/messages/{id}`: one message and everything that happened to it, oldest first. */
export interface MessageTimeline extends Omit<MessageTimelineView, "events"> {
  readonly events: readonly TimelineEvent[];
}

/** One message of `GET /admin/messages`. */
export type MessageSummary = MessageSummaryView;

/** A page of `GET /admin/messages`, newest first. */
export interface MessagePage {
  readonly items: readonly MessageSummary[];
  readonly next_cursor: string | null;
}

/** One minute of `GET /admin/activity`; p50/p99 are null for a minute in which nothing was delivered. */
export type ActivityBucket = ActivityBucketView;

/** `GET /admin/activity`: the last hour, a bucket a minute, oldest first. */
export interface Activity {
  readonly bucket_seconds: number;
  readonly buckets: readonly ActivityBucket[];
}
