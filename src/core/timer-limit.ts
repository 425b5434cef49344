/**
 * The longest delay a timer takes (`setTimeout`, `AbortSignal.timeout`): Node fires a longer one
 * at once, with a TimeoutOverflowWarning, so a setting that becomes a timer is capped here.
 */
export const MAX_TIMER_MS = 2_147_483_647;
