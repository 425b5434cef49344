/**
 * Collects messages and sends them as one array after the current turn of the event loop:
 * one `postMessage` per turn instead of one per message, which is what makes a second thread
 * pay off at thousands of messages per second.
 */
export function createTurnBatcher<T>(send: (batch: T[]) => void): { push(message: T): void; flush(): void } {
  let batch: T[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (batch.length === 0) return;
    const out = batch;
    batch = [];
    send(out);
  };
  return {
    push(message) {
      batch.push(message);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
