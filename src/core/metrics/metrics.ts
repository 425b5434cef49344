/**
 * What the service counts and times, as events. The core calls these on its hot paths, so
 * each is one call with plain arguments (no label objects): an implementation keeps whatever
 * it needs per channel itself. Durations are in seconds, as Prometheus wants them.
 */
export interface Metrics {
  /** A request to a channel's path was answered with HTTP status `code`. */
  request(channel: string, code: number): void;
  /** A message was accepted (queued; its 200 is being sent). */
  accepted(channel: string): void;
  /** One reply POST succeeded, taking `seconds`. */
  delivered(channel: string, seconds: number): void;
  /** A reply POST failed and will be tried again. */
  retry(channel: string): void;
  /** The brain was asked (memory, call and rendering), taking `seconds`. */
  brainCall(channel: string, brain: string, ok: boolean, seconds: number): void;
  /** A message was given up on and dead-lettered. */
  deadLetter(channel: string): void;
  /** A message was finished: `seconds` from its acceptance to its last reply delivered. */
  endToEnd(channel: string, seconds: number): void;
  /** A channel's receiver (its `outbound_url`) went down (`up` false) or came back up. */
  receiverState(channel: string, up: boolean): void;
  /** Calls to a brain in flight now, across all conversations (after each change). */
  brainInFlight(brain: string, calls: number): void;
  /**
   * A brain was paused for everyone (a 429 or 503), or resumed. `untilMs` (epoch ms) is when
   * the pause ends, given with every `paused` true; a pause that a call in flight lengthened is
   * reported again with its new end.
   */
  brainPaused(brain: string, paused: boolean, untilMs?: number): void;
  /** The tokens a brain reported for one call. */
  brainTokens(channel: string, brain: string, prompt: number, completion: number): void;
  /**
   * An operator event of `type` reached its URL (`sent`), was given up on after its attempts or
   * a refusal (`failed`), or was dropped unsent (`dropped`: too many waited, or the service stopped).
   */
  operatorEvent(type: string, outcome: "sent" | "failed" | "dropped"): void;
}
