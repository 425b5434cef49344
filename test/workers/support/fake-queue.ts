/** A queue producer that records what is sent, or refuses everything. */
export interface FakeQueue extends Queue<unknown> {
  readonly sent: unknown[];
}

/** A producer binding that keeps the bodies it is sent; `refuse` makes every send fail. */
export function createFakeQueue(options: { refuse?: boolean } = {}): FakeQueue {
  const sent: unknown[] = [];
  const metrics = { backlogCount: 0, backlogBytes: 0 };
  return {
    sent,
    metrics: () => Promise.resolve(metrics),
    send(body) {
      if (options.refuse === true) return Promise.reject(new Error("queue unavailable"));
      sent.push(body);
      return Promise.resolve({ metadata: { metrics } });
    },
    sendBatch(messages) {
      if (options.refuse === true) return Promise.reject(new Error("queue unavailable"));
      for (const message of messages) sent.push(message.body);
      return Promise.resolve({ metadata: { metrics } });
    },
  };
}
