import { expect } from "vitest";

/** POSTs `text` from `sender` to a channel's `url` with `secret`, expects 200, and gives the message's id. */
export async function postAccepted(url: string, secret: string, sender: string, text: string): Promise<string> {
  const response = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: sender, text }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { message_id: string }).message_id;
}
