import { MAX_TIMER_MS } from "./timer-limit.js";

/**
 * Waits for `work` at most `ms`: true when it settled in time (a rejection settles it too),
 * false when the wait ran out first, and `work` goes on. The timer is cleared either way, so a
 * wait that ended early holds no process open.
 */
export async function waitAtMost(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(false), Math.min(MAX_TIMER_MS, Math.max(0, ms)));
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
