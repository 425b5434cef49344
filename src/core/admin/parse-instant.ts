/**
 * A point in time as the admin API's `since` and the CLI's `--since` take it: an ISO 8601 date
 * (its midnight UTC) or date-time, whose time without `Z` or an offset is UTC (as every time this
 * service prints is), or epoch milliseconds. Undefined for anything else: a date the calendar
 * does not have (`2026-02-31`), and a number too small for epoch milliseconds after 1973 (epoch
 * seconds, or a date written without dashes, taken as milliseconds would land in 1970).
 */
export function parseInstant(raw: string): number | undefined {
  if (/^\d{12,15}$/.test(raw)) return Number(raw);
  const match = ISO.exec(raw);
  if (match === null) return undefined;
  const part = (index: number): number => Number(match[index] ?? 0);
  const [year, month, day, hour, minute, second] = [part(1), part(2), part(3), part(4), part(5), part(6)];
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const fraction = match[7] === undefined ? 0 : Math.floor(Number(`0.${match[7]}`) * 1000);
  const zone = match[8];
  const offsetMs = zone === undefined || zone === "Z" || zone === "z" ? 0 : offsetOf(zone);
  if (offsetMs === undefined) return undefined;
  const at = new Date(0);
  // Not Date.UTC, which reads the years 0 to 99 as 1900 to 1999.
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute, second, fraction);
  return at.getTime() - offsetMs;
}

/** Date, then optionally `T` (or a space), hours and minutes, seconds, a fraction, and a zone. */
const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/;

function daysIn(year: number, month: number): number {
  const last = new Date(0);
  last.setUTCFullYear(year, month, 0);
  return last.getUTCDate();
}

function offsetOf(zone: string): number | undefined {
  const digits = zone.slice(1).replace(":", "");
  const hours = Number(digits.slice(0, 2));
  const minutes = Number(digits.slice(2));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith("-") ? -1 : 1) * (hours * 60 + minutes) * 60_000;
}
