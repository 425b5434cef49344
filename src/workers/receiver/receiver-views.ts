/**
 * What this isolate last learned of each channel's receiver, from the receiver object's
 * answers: module state, so every conversation object of the isolate shares it. While it says
 * nothing is wrong (the usual case) a conversation posts without asking anyone, which keeps the
 * healthy path free of Durable Object requests; it is refreshed by every answer (a failure
 * reported, a wait registered) and by the wake-up when the receiver is up again. A channel this
 * isolate has not heard of yet posts as if healthy, but its first answer is told: the receiver
 * object may hold the receiver down from before the isolate began (a deploy, an eviction), and
 * would otherwise say so for ever.
 */
export interface ReceiverView {
  /** The receiver is down: replies wait (the receiver object wakes them). */
  readonly down: boolean;
  /** Failures are counted against it: a success is worth reporting, to reset the count. */
  readonly failing: boolean;
}

const HEALTHY: ReceiverView = { down: false, failing: false };
/** Not heard of yet: posts, and an answer is worth telling, as while failures are counted. */
const UNHEARD: ReceiverView = { down: false, failing: true };
/** One entry per channel this isolate heard of: as many as the configuration has. */
const views = new Map<string, ReceiverView>();

/** The isolate's view of a channel's receiver. */
export function receiverView(channel: string): ReceiverView {
  return views.get(channel) ?? UNHEARD;
}

/** Records what the receiver object answered for a channel. */
export function learnReceiver(channel: string, view: ReceiverView): void {
  views.set(channel, view.down || view.failing ? view : HEALTHY);
}
