/**
 * One statement for what an event-loop turn asks: each `ask` joins the batch now forming, and
 * `run` answers the whole batch at once (one answer per item, in order). One batch runs at a
 * time; the next one forms while it does, so under load a statement carries many items and
 * the statements per message fall, while a lone item waits no longer than a turn.
 */
export function createStatementBatch<I, O>(
  run: (items: readonly I[]) => Promise<readonly O[]>,
): (item: I) => Promise<O> {
  let forming: { items: I[]; waiters: { resolve: (answer: O) => void; reject: (error: unknown) => void }[] } = {
    items: [],
    waiters: [],
  };
  let running = false;
  let scheduled = false;

  const start = (): void => {
    scheduled = false;
    if (running || forming.items.length === 0) return;
    const batch = forming;
    forming = { items: [], waiters: [] };
    running = true;
    run(batch.items)
      .then(
        (answers) => {
          batch.waiters.forEach((waiter, index) => {
            const answer = answers[index];
            if (answer === undefined) waiter.reject(new Error("a batched statement gave no answer for an item"));
            else waiter.resolve(answer);
          });
        },
        (error: unknown) => {
          for (const waiter of batch.waiters) waiter.reject(error);
        },
      )
      .finally(() => {
        running = false;
        start();
      })
      .catch(() => undefined);
  };

  return (item) =>
    new Promise<O>((resolve, reject) => {
      forming.items.push(item);
      forming.waiters.push({ resolve, reject });
      if (!scheduled && !running) {
        scheduled = true;
        setImmediate(start);
      }
    });
}
