/**
 * Issue 32's promise, end to end on each state backend: one message followed through a receiver
 * outage, a dead letter and a replay to its delivery, and its timeline read three ways — the
 * admin API's JSON, the built CLI (`messages show --url`, as JSON and for people) and the console
 * in Chromium — which must agree, event for event. The same scenario runs unchanged on every
 * backend of {@link READER_BACKENDS}.
 */
import { randomUUID } from "node:crypto";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replayDeadLetter } from "../shared/delivery-cases.js";
import { type TimelineView, timelineWhen } from "../shared/timeline-cases.js";
import { type JsonTestServer, startJsonServer } from "../support/json-test-server.js";
import { runBuiltCli } from "../support/spawn-node.js";
import { type ConsolePage, launchChromium, openConsolePage } from "./support/console-browser.js";
import { searchFor, shownEventTimes, shownEventTitles, shownStatus, signIn } from "./support/console-timeline.js";
import {
  READER_ADMIN_SECRET,
  READER_BACKENDS,
  READER_CHANNEL_PATH,
  READER_CHANNEL_SECRET,
  type ReaderService,
} from "./support/timeline-reader-backends.js";

type EventView = TimelineView["events"][number];

/** How long any one step may take: wrangler dev moves a dead letter and a replay through its queues. */
const STEP_MS = 30_000;

/** What the receiver answers a reply's POSTs while it is not up: down twice, then a refusal. */
const OUTAGE = [503, 503, 400] as const;

/** The events of the scenario's message, in order, as every backend records them. */
const EVENTS = [
  "accepted",
  "brain_call",
  "reply",
  "attempt",
  "retry",
  "attempt",
  "retry",
  "attempt",
  "dead_letter",
  "replayed",
  "reply",
  "attempt",
  "delivered",
] as const;

/** A status in the console's words (src/console/status-words.ts), for the statuses the scenario reaches. */
const CONSOLE_STATUS: Readonly<Record<string, string>> = { dead_letter: "dead letter", delivered: "delivered" };

/** The title the console gives an event (src/console/timeline-events.ts), written out here as a reader sees it. */
function consoleTitle(event: EventView): string {
  switch (event.type) {
    case "accepted":
      return "Accepted";
    case "brain_call":
      return event.ok === true ? "Brain answered" : "Brain failed";
    case "reply":
      return `Reply ${String(event.sequence)}`;
    case "attempt":
      return event.ok === true ? "Posted" : "Post failed";
    case "retry":
      return "Will try again";
    case "dead_letter":
      return "Dead-lettered";
    case "replayed":
      return "Replayed";
    case "delivered":
      return "Delivered";
    default:
      return `(no title for ${event.type})`;
  }
}

/** A receiver that answers each reply's POSTs with {@link OUTAGE} until `up` is set, then 200. */
interface OutageReceiver {
  readonly server: JsonTestServer;
  /** Every status answered, in order. */
  readonly answered: number[];
  up: boolean;
}

async function startOutageReceiver(): Promise<OutageReceiver> {
  const attempts = new Map<string, number>();
  const receiver = { answered: [] as number[], up: false };
  const server = await startJsonServer((request) => {
    const replyId = String((request.body as { message_id?: unknown } | undefined)?.message_id);
    const attempt = (attempts.get(replyId) ?? 0) + 1;
    attempts.set(replyId, attempt);
    const status = receiver.up ? 200 : (OUTAGE[attempt - 1] ?? 400);
    receiver.answered.push(status);
    return { status };
  });
  return Object.assign(receiver, { server });
}

/** The admin API of `service`, as the shared timeline helpers call it. */
function adminOf(service: ReaderService) {
  return {
    admin: (path: string, init: RequestInit = {}) =>
      fetch(`${service.origin}${path}`, {
        ...init,
        headers: { authorization: `Bearer ${READER_ADMIN_SECRET}` },
      }),
  };
}

/**
 * Reads the timeline of `id` through the API, the CLI and the console on `page` (already signed
 * in), checks that all three say the same, and returns the API's view.
 */
async function readersAgree(service: ReaderService, id: string, page: Page): Promise<TimelineView> {
  const answer = await adminOf(service).admin(`/admin/messages/${encodeURIComponent(id)}`);
  expect(answer.status).toBe(200);
  const view = (await answer.json()) as TimelineView;

  // The CLI, as an operator runs it: the API's JSON with --json, and one line per event for people.
  const env = { WEBHOOK_ADMIN_SECRET: READER_ADMIN_SECRET };
  const json = await runBuiltCli(["messages", "show", id, "--url", service.origin, "--json"], env);
  expect(json).toMatchObject({ code: 0, err: "" });
  expect(JSON.parse(json.out)).toEqual(view);
  const people = await runBuiltCli(["messages", "show", id, "--url", service.origin], env);
  expect(people).toMatchObject({ code: 0, err: "" });
  expect(people.out).toContain(`\nstatus        ${view.status}\n`);
  const [heading, ...rows] = people.out.split("\n\n")[1]?.split("\n") ?? [];
  expect(heading).toMatch(/^TIME \(UTC\) +AFTER +EVENT +FACTS$/);
  expect(rows.map((row) => /^(\S+) +\S+ +(\S+)/.exec(row)?.slice(1))).toEqual(
    view.events.map((event) => [event.at, event.type]),
  );

  // The console: the same status, and the same events in the same order at the same times.
  await searchFor(page, id);
  await expect.poll(() => page.locator("#found-title").textContent()).toBe(`Message ${id}`);
  await expect.poll(() => shownStatus(page)).toBe(CONSOLE_STATUS[view.status]);
  await expect.poll(() => shownEventTitles(page)).toEqual(view.events.map(consoleTitle));
  expect(await shownEventTimes(page)).toEqual(view.events.map((event) => new Date(event.at).toISOString()));
  return view;
}

/**
 * The scenario: a message whose reply meets a receiver that is down, then refuses it (a dead
 * letter); the receiver comes back and an operator replays the dead letter; it is delivered.
 * The readers are compared at the dead letter and again at the end.
 */
async function followThroughOutageAndReplay(service: ReaderService, receiver: OutageReceiver, page: Page) {
  const api = adminOf(service);
  const conversation = `readers-${randomUUID()}`;
  const sent = await fetch(`${service.origin}${READER_CHANNEL_PATH}`, {
    method: "POST",
    headers: { authorization: `Bearer ${READER_CHANNEL_SECRET}`, "content-type": "application/json" },
    body: JSON.stringify({ sender_id: conversation, conversation_id: conversation, text: "where is my answer?" }),
  });
  expect(sent.status).toBe(200);
  const id = ((await sent.json()) as { message_id: string }).message_id;

  await timelineWhen(api, id, (view) => view.status === "dead_letter", STEP_MS, "the message dead-lettered");
  const dead = await readersAgree(service, id, page);
  expect(dead.conversation_id).toBe(conversation);
  expect(dead.events.map((event) => event.type)).toEqual(EVENTS.slice(0, EVENTS.indexOf("dead_letter") + 1));

  receiver.up = true;
  await replayDeadLetter(api, id, STEP_MS);
  await timelineWhen(api, id, (view) => view.status === "delivered", STEP_MS, "the replayed message delivered");
  const done = await readersAgree(service, id, page);
  expect(done.events.map((event) => event.type)).toEqual([...EVENTS]);
  const attempts = done.events.filter((event) => event.type === "attempt").map((event) => event.status);
  expect(attempts).toEqual([...OUTAGE, 200]);
  // What the receiver answered is what the timeline says it answered.
  expect(receiver.answered).toEqual(attempts);
}

let browser: Browser;

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
});

describe.each(READER_BACKENDS)("the message timeline's readers on $name", (backend) => {
  let receiver: OutageReceiver | undefined;
  let service: ReaderService | undefined;
  let tab: ConsolePage | undefined;

  beforeAll(async () => {
    receiver = await startOutageReceiver();
    service = await backend.start(`${receiver.server.origin}/replies`);
    tab = await openConsolePage(browser, service.origin);
    await signIn(tab.page, service.origin, READER_ADMIN_SECRET);
  });

  afterAll(async () => {
    await tab?.close();
    await service?.stop();
    await receiver?.server.close();
  });

  it("follows one message through a receiver outage, a dead letter and a replay; the API, the CLI and the console agree", async () => {
    if (service === undefined || receiver === undefined || tab === undefined) throw new Error("not started");
    await followThroughOutageAndReplay(service, receiver, tab.page);
    // The console kept its policy: no error, no request to another origin.
    expect(tab.errors).toEqual([]);
    expect(tab.foreign).toEqual([]);
  });
});
