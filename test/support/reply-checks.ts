/**
 * What the end-to-end tests of several processes ask of the replies a real receiver got: each
 * accepted message answered, under one webhook-id however often it was posted, and each
 * conversation's replies in acceptance order, numbered 1, 2, 3… without a gap or a repeat.
 */
import { expect } from "vitest";
import type { ReceivedReply } from "../../src/node/receiver/sample-receiver.js";
import { waitFor } from "./wait-for.js";

/** The fields of a reply's body these checks read. */
export interface ReplyBody {
  readonly message_id: string;
  readonly in_reply_to: string;
  readonly conversation_id: string;
  readonly sequence: number;
}

/** The body of a reply the sample receiver got. */
export function replyBody(reply: ReceivedReply): ReplyBody {
  return reply.body as ReplyBody;
}

/** Waits until every message of `ids` has a reply among `replies` (which keeps growing). */
export async function waitForReplies(
  replies: readonly ReceivedReply[],
  ids: readonly string[],
  timeoutMs: number,
): Promise<void> {
  await waitFor(
    () => {
      const answered = new Set(replies.map((reply) => replyBody(reply).in_reply_to));
      return ids.every((id) => answered.has(id)) ? true : undefined;
    },
    timeoutMs,
    "every accepted message's reply",
  );
}

/** Every message's replies reached the receiver under one webhook-id, the reply's own id. */
export function expectOneWebhookIdPerMessage(replies: readonly ReceivedReply[]): void {
  const idsPerMessage = new Map<string, Set<string>>();
  for (const reply of replies) {
    const body = replyBody(reply);
    expect(reply.headers["webhook-id"]).toBe(body.message_id);
    idsPerMessage.set(body.in_reply_to, (idsPerMessage.get(body.in_reply_to) ?? new Set()).add(body.message_id));
  }
  for (const [message, ids] of idsPerMessage) expect(ids.size, `webhook-ids of the replies to ${message}`).toBe(1);
}

/**
 * The first post of each reply of `conversation`, in the order received, follows `accepted` (the
 * ids answered 200, in order; a message whose 200 was lost may sit between them) and is numbered
 * by its place from `firstSequence`: 1, 2, 3… without a gap by default.
 */
export function expectConversationInOrder(
  replies: readonly ReceivedReply[],
  conversation: string,
  accepted: readonly string[],
  firstSequence = 1,
): void {
  const firstPosts: ReplyBody[] = [];
  const seen = new Set<string>();
  for (const reply of replies) {
    const body = replyBody(reply);
    if (body.conversation_id !== conversation || seen.has(body.message_id)) continue;
    seen.add(body.message_id);
    firstPosts.push(body);
  }
  const known = new Set(accepted);
  expect(firstPosts.map((body) => body.in_reply_to).filter((id) => known.has(id))).toEqual(accepted);
  expect(firstPosts.map((body) => body.sequence)).toEqual(firstPosts.map((_, at) => at + firstSequence));
}

/**
 * What a fault test asks of every message a client sent (`sent`, in the order sent): each one
 * answered 200 gets its reply within `timeoutMs`, under one webhook-id, and each conversation's
 * replies follow the order of its accepted messages with gapless numbers.
 */
export async function expectAcceptedAnsweredInOrder(
  replies: readonly ReceivedReply[],
  sent: readonly { readonly conversation: string; readonly status: number; readonly id?: string }[],
  timeoutMs: number,
): Promise<void> {
  const accepted = sent.filter((result) => result.status === 200);
  await waitForReplies(
    replies,
    accepted.map((result) => result.id ?? ""),
    timeoutMs,
  );
  expectOneWebhookIdPerMessage(replies);
  for (const conversation of new Set(accepted.map((result) => result.conversation))) {
    expectConversationInOrder(
      replies,
      conversation,
      accepted.filter((result) => result.conversation === conversation).map((result) => result.id ?? ""),
    );
  }
}
