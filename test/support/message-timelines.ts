import { expect } from "vitest";
import type { ServiceHarness } from "./node-service.js";
import { runCliCaptured } from "./run-cli-captured.js";
import { waitFor } from "./wait-for.js";

/** The admin secret of the services these tests start. */
export const ADMIN = "admin-secret-for-the-cli-0123";

/** Receiver answers: 400 (a reply never delivered) for the conversation `c-bad`, else 200. */
export function refuseBadConversation(reply: { readonly body: unknown }): number {
  const body = reply.body as { conversation_id?: unknown };
  return body.conversation_id === "c-bad" ? 400 : 200;
}

/** The service's settings that make `c-bad` a dead letter at its first failed POST. */
export const ONE_ATTEMPT = { delivery: { max_attempts: 1, circuit_failures: 0 } } as const;

/** What {@link sendAndSettle} sent: ids of a delivered, a dead-lettered and a paged conversation's messages. */
export interface SentMessages {
  readonly delivered: string;
  readonly deadLettered: string;
  /** The five messages of `c-page`, oldest first. */
  readonly page: readonly string[];
}

/** GETs an admin API path of the harness's service with the admin secret. */
export function adminGet(harness: ServiceHarness, path: string): Promise<Response> {
  return fetch(`${harness.baseUrl}/admin/${path}`, { headers: { authorization: `Bearer ${ADMIN}` } });
}

/**
 * Sends a message to `c-ok`, one to `c-bad` and five to `c-page`, each after the one before
 * was accepted, and waits until the admin API shows each one ended (delivered or dead letter).
 */
export async function sendAndSettle(harness: ServiceHarness): Promise<SentMessages> {
  const send = async (conversation: string, text: string): Promise<string> => {
    const response = await harness.post({ sender_id: "cli", conversation_id: conversation, text });
    expect(response.status).toBe(200);
    return ((await response.json()) as { message_id: string }).message_id;
  };
  const delivered = await send("c-ok", "hello");
  const deadLettered = await send("c-bad", "never answered");
  const page: string[] = [];
  for (let index = 1; index <= 5; index += 1) page.push(await send("c-page", `page ${index}`));
  for (const [id, status] of [
    [delivered, "delivered"],
    [deadLettered, "dead_letter"],
    ...page.map((id) => [id, "delivered"]),
  ]) {
    await waitFor(
      async () => {
        const response = await adminGet(harness, `messages/${id}`);
        const view = (await response.json()) as { status?: string };
        return view.status === status ? true : undefined;
      },
      10_000,
      `message ${id} ${status} in the timeline`,
      25,
    );
  }
  return { delivered, deadLettered, page };
}

/**
 * Checks that `messages` with `source` (`--url <u>` or `--config <f>`) shows and lists what the
 * harness's admin API answers, for people and with --json, and says so when a message is unknown.
 */
export async function expectCliReadsTimelines(
  harness: ServiceHarness,
  sent: SentMessages,
  source: readonly string[],
  env: Record<string, string>,
): Promise<void> {
  const cli = (args: readonly string[]) => runCliCaptured(["messages", ...args, ...source], env);
  const apiText = async (path: string) => {
    const response = await adminGet(harness, path);
    expect(response.status).toBe(200);
    return response.text();
  };

  // A delivered message: the API's JSON exactly, and a readable timeline.
  const json = await cli(["show", sent.delivered, "--json"]);
  expect(json).toMatchObject({ code: 0, err: "" });
  expect(json.out).toBe(`${await apiText(`messages/${sent.delivered}`)}\n`);
  const shown = await cli(["show", sent.delivered]);
  expect(shown.code).toBe(0);
  expect(shown.out).toContain(`message       ${sent.delivered}\n`);
  expect(shown.out).toContain("conversation  c-ok\n");
  expect(shown.out).toContain("status        delivered\n");
  expect(shown.out).not.toContain("waiting ");
  const events = shown.out.split("\n\n")[1]?.trimEnd().split("\n") ?? [];
  expect(events[0]).toMatch(/^TIME \(UTC\) +AFTER +EVENT +FACTS$/);
  expect(events[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}\+0\.000s +accepted +client 127\.0\.0\.1/);
  expect(shown.out).toMatch(/ brain_call +echo: ok in \d+ ms\n/);
  expect(shown.out).toMatch(/ reply +#1 \S+\n/);
  expect(shown.out).toMatch(/ attempt +#1 \S+: (HTTP 200|ok) in \d+ ms\n/);
  expect(events.at(-1)).toMatch(/ delivered +every reply delivered$/);

  // A dead-lettered one: the failed POST and how it ended.
  const dead = await cli(["show", sent.deadLettered]);
  expect(dead.code).toBe(0);
  expect(dead.out).toContain("status        dead_letter\n");
  expect(dead.out).toMatch(/ attempt +#1 \S+: failed in \d+ ms, HTTP 400 — \w+/);
  expect(dead.out).toMatch(/ dead_letter +gave up — \w+: .+\n$/);
  expect(JSON.parse((await cli(["show", sent.deadLettered, "--json"])).out)).toEqual(
    JSON.parse(await apiText(`messages/${sent.deadLettered}`)),
  );

  // A conversation's messages, newest first, a page at a time.
  const newestFirst = [...sent.page].reverse();
  const first = await cli(["list", "--conversation", "c-page", "--limit", "2", "--json"]);
  expect(first.code).toBe(0);
  expect(first.out).toBe(`${await apiText("messages?conversation_id=c-page&limit=2")}\n`);
  const firstPage = JSON.parse(first.out) as { items: { message_id: string }[]; next_cursor: string | null };
  expect(firstPage.items.map((item) => item.message_id)).toEqual(newestFirst.slice(0, 2));
  const cursor = firstPage.next_cursor ?? "";
  expect(cursor).not.toBe("");
  const second = await cli(["list", "--conversation", "c-page", "--limit", "2", "--cursor", cursor, "--json"]);
  expect(second.out).toBe(`${await apiText(`messages?conversation_id=c-page&limit=2&cursor=${cursor}`)}\n`);
  const table = await cli(["list", "--conversation", "c-page", "--limit", "2"]);
  expect(table.code).toBe(0);
  expect(table.out).toMatch(/^MESSAGE ID +CHANNEL +CONVERSATION +STATUS +ACCEPTED \(UTC\) +UPDATED \(UTC\)\n/);
  expect(table.out.trimEnd().split("\n").slice(1)).toEqual(
    newestFirst
      .slice(0, 2)
      .map((id) => expect.stringMatching(new RegExp(`^${id} +webhook +c-page +delivered +\\d{4}-`))),
  );
  expect(table.err).toContain(
    `2 message(s), newest first; next page: npx webhook-channel messages list --conversation c-page --limit 2 --cursor ${cursor}`,
  );
  const all = await cli(["list", "--conversation", "c-page", "--limit", "2", "--all", "--json"]);
  expect(JSON.parse(all.out)).toEqual({
    items: newestFirst.map((id) => expect.objectContaining({ message_id: id, status: "delivered" })),
    next_cursor: null,
  });
  const allTable = await cli(["list", "--conversation", "c-page", "--all"]);
  expect(allTable.out.trimEnd().split("\n")).toHaveLength(6);
  expect(allTable.err).toBe("5 message(s), newest first\n");

  // Filters: a status, a time.
  const deadOnes = JSON.parse((await cli(["list", "--status", "dead_letter", "--json"])).out) as {
    items: { message_id: string }[];
  };
  expect(deadOnes.items.map((item) => item.message_id)).toEqual([sent.deadLettered]);
  const future = await cli(["list", "--since", "2999-01-01T00:00:00Z"]);
  expect(future).toMatchObject({ code: 1, out: "", err: "no message matches\n" });

  // An id the timeline does not hold.
  const unknown = await cli(["show", "no-such-message"]);
  expect(unknown.code).toBe(1);
  expect(unknown.out).toBe("");
  expect(unknown.err).toMatch(/^no message with id no-such-message in the timeline: it was never accepted/);
}
