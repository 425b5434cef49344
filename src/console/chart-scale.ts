/** A value axis from 0: its top and the values its grid lines mark. */
export interface Scale {
  readonly max: number;
  readonly ticks: readonly number[];
}

/**
 * The axis from 0 to a round top at or above `largest`, in about four steps of 1, 2 or 5 times a
 * power of ten (whole steps for counts), so that grid lines fall on numbers a person reads at once.
 */
export function niceScale(largest: number, whole: boolean): Scale {
  const span = Math.max(largest, whole ? 4 : 1);
  const target = span / 4;
  const power = 10 ** Math.floor(Math.log10(target));
  const step = [1, 2, 5, 10].map((factor) => factor * power).find((candidate) => candidate >= target) ?? 10 * power;
  const roundStep = whole ? Math.max(1, Math.ceil(step)) : step;
  const steps = Math.ceil(span / roundStep - 1e-9);
  const ticks = Array.from({ length: steps + 1 }, (_, index) => index * roundStep);
  return { max: steps * roundStep, ticks };
}
