import { expect } from "vitest";
import type { ServiceHarness } from "../../support/node-service.js";

/** The admin secret the admin tests start their services with (in `ADMIN_SECRET`). */
export const ADMIN = "admin-secret-0123456789";

/** A request to the harness's admin API, with the admin secret unless another is given. */
export function adminRequest(
  harness: ServiceHarness,
  path: string,
  init: RequestInit = {},
  secret = ADMIN,
): Promise<Response> {
  return fetch(`${harness.baseUrl}${path}`, {
    ...init,
    headers: { authorization: `Bearer ${secret}`, ...(init.headers as Record<string, string> | undefined) },
  });
}

/** One page of `GET /admin/dead-letters`, asserting it is a 200. */
export async function listDeadLetters(
  harness: ServiceHarness,
  query = "",
): Promise<{ items: Record<string, unknown>[]; next_cursor: string | null }> {
  const response = await adminRequest(harness, `/admin/dead-letters${query}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { items: Record<string, unknown>[]; next_cursor: string | null };
}

/**
 * Posts messages one at a time, each after the last is a dead letter, so they die in order;
 * the receiver must refuse them. Returns their ids (the dead letters' ids).
 */
export async function makeDeadLetters(harness: ServiceHarness, texts: readonly string[]): Promise<string[]> {
  const ids: string[] = [];
  for (const text of texts) {
    const response = await harness.post({ sender_id: `user-${text}`, conversation_id: `conv-${text}`, text });
    expect(response.status).toBe(200);
    const id = ((await response.json()) as { message_id: string }).message_id;
    ids.push(id);
    let found = false;
    for (let tries = 0; tries < 250 && !found; tries += 1) {
      found = (await adminRequest(harness, `/admin/dead-letters/${id}`)).status === 200;
      // Apart by a few ms, so that the oldest-first order is the order posted.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    if (!found) throw new Error(`message ${id} did not become a dead letter`);
  }
  return ids;
}
