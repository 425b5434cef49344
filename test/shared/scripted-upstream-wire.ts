/**
 * The wire format of the scripted upstream (test/support/scripted-upstream.ts), shared by the
 * server on Node and its client inside workerd (test/workers/support/scripted-upstream-client.ts):
 * plain types, so both test projects can import them.
 */

/** What a scenario answers to one request. */
export interface ScriptedReply {
  /** Default 200. */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as JSON; no body when absent. */
  readonly body?: unknown;
  /** Answer after this many ms. */
  readonly delayMs?: number;
  /** Never answer: the request stays open until the client gives up or the scenario is deleted. */
  readonly hang?: boolean;
}

/** One request as a scenario received it. */
export interface ScriptedRequest {
  readonly method: string;
  /** Path and query after the scenario's prefix, `/` at least. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body; the text when it is not JSON; null when empty. */
  readonly body: unknown;
  /** Epoch ms when the request arrived. */
  readonly receivedAt: number;
  /** The status the script answers it with (when its delay is over); null for a hang. */
  readonly status: number | null;
}

/** What `GET /_scenario/<id>` answers. */
export interface ScenarioRecord {
  readonly requests: readonly ScriptedRequest[];
  /** Requests open at once, at most: a check on a client's concurrency. */
  readonly maxInFlight: number;
}
