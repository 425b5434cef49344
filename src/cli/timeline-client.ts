import { addressableId } from "../core/admin/addressable-id.js";
import type { MessagePage, TimelineAdmin } from "../core/timeline/timeline-admin.js";
import type { ActivityBucketView, MessageSummaryView, MessageTimelineView } from "../core/timeline/timeline-views.js";
import { ADMIN_CALL_TIMEOUT_MS, AdminApiError, fetchAdmin, problemDetail } from "./admin-client.js";

/**
 * The timeline of a running service (`--url`) through its admin API, as the same port the
 * routes serve, so that `messages` reads and prints alike from a service and from its state.
 */
export function createTimelineClient(
  baseUrl: string,
  secret: string,
  timeoutMs = ADMIN_CALL_TIMEOUT_MS,
): TimelineAdmin {
  const base = baseUrl.replace(/\/+$/, "");
  const get = async (path: string, ...ok: number[]): Promise<Response> => {
    const response = await fetchAdmin(
      `${base}/admin/${path}`,
      { headers: { authorization: `Bearer ${secret}` } },
      timeoutMs,
    );
    if (ok.includes(response.status)) return response;
    throw new AdminApiError(`${response.status} from the admin API: ${await problemDetail(response)}`);
  };
  return {
    async get(id) {
      if (addressableId(id)) {
        const response = await get(`messages/${encodeURIComponent(id)}`, 200, 404);
        if (response.status === 200) return (await response.json()) as MessageTimelineView;
        await response.body?.cancel();
      }
      // The same 404 says the timeline is off: the list tells the two apart, and says which.
      const list = await get("messages?limit=1", 200);
      await list.body?.cancel();
      return undefined;
    },
    async list(query): Promise<MessagePage> {
      const params = new URLSearchParams({ limit: String(query.limit) });
      if (query.cursor !== undefined) params.set("cursor", query.cursor);
      if (query.channel !== undefined) params.set("channel", query.channel);
      if (query.conversationId !== undefined) params.set("conversation_id", query.conversationId);
      if (query.status !== undefined) params.set("status", query.status);
      if (query.since !== undefined) params.set("since", sinceParameter(query.since));
      const response = await get(`messages?${params.toString()}`, 200);
      const page = (await response.json()) as { items: MessageSummaryView[]; next_cursor: string | null };
      return { items: page.items, nextCursor: page.next_cursor };
    },
    async activity() {
      const response = await get("activity", 200);
      return (await response.json()) as { bucket_seconds: number; buckets: ActivityBucketView[] };
    },
  };
}

/**
 * `since` as the API reads it: epoch milliseconds where the API takes them (twelve to fifteen
 * digits, from 1973 on), else ISO 8601, which past the year 9999 the API does not read.
 */
function sinceParameter(since: number): string {
  return Number.isInteger(since) && since >= 1e11 && since < 1e15 ? String(since) : new Date(since).toISOString();
}
