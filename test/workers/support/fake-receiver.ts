import { vi } from "vitest";

/** One POST that reached the fake receiver. */
export interface Delivery {
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Record<string, unknown>;
}

/** What the fake receiver answers to the n-th delivery (0-based), at once or when the promise resolves. */
export type Answer = (delivery: Delivery, index: number) => Response | Promise<Response>;

/**
 * Replaces the isolate's `fetch` (the Worker looks it up on every call) with a receiver that
 * records each POST and answers as told. vi.restoreAllMocks() puts the real one back.
 */
export function fakeReceiver(answer: Answer = () => new Response(null, { status: 200 })): { deliveries: Delivery[] } {
  const deliveries: Delivery[] = [];
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    const delivery: Delivery = {
      url: request.url,
      headers: Object.fromEntries(request.headers),
      body: (await request.json()) as Record<string, unknown>,
    };
    deliveries.push(delivery);
    return await answer(delivery, deliveries.length - 1);
  });
  return { deliveries };
}

/** Captures the JSON log lines the Worker writes with console.log. */
export function captureLogs(): { lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  vi.spyOn(console, "log").mockImplementation((line: unknown) => {
    if (typeof line === "string" && line.startsWith("{")) lines.push(JSON.parse(line) as Record<string, unknown>);
  });
  return { lines };
}
