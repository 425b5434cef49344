import { describe, expect, it } from "vitest";
import { parseInstant } from "../../../src/core/admin/parse-instant.js";

describe("parseInstant (since, --since)", () => {
  it.each([
    ["a date, at its midnight UTC", "2026-11-30", Date.UTC(2026, 10, 30)],
    ["a time with Z", "2026-11-30T06:22:00Z", Date.UTC(2026, 10, 30, 6, 22)],
    ["a time without a zone, as UTC whatever the machine's zone", "2026-11-30T06:22:00", Date.UTC(2026, 10, 30, 6, 22)],
    ["a time without seconds", "2026-11-30T06:22", Date.UTC(2026, 10, 30, 6, 22)],
    ["a time with an offset", "2026-11-30T07:22:00+01:00", Date.UTC(2026, 10, 30, 6, 22)],
    ["a negative offset without a colon", "2026-11-30T01:22:00-0500", Date.UTC(2026, 10, 30, 6, 22)],
    ["milliseconds", "2026-11-30T06:22:00.250Z", Date.UTC(2026, 10, 30, 6, 22, 0, 250)],
    ["a space for the T", "2026-11-30 06:22:00Z", Date.UTC(2026, 10, 30, 6, 22)],
    ["29 February of a leap year", "2028-02-29", Date.UTC(2028, 1, 29)],
    ["epoch milliseconds", "1764483720000", 1_764_483_720_000],
    ["a year before 100, as written (not 19xx)", "0050-03-01", new Date("0050-03-01T00:00:00Z").getTime()],
    ["a time before 1970, as the CLI sends it", "1969-07-20T20:17:00.000Z", Date.UTC(1969, 6, 20, 20, 17)],
  ])("reads %s", (_what, raw, expected) => {
    expect(parseInstant(raw)).toBe(expected);
  });

  it.each([
    ["a day the month does not have", "2026-02-31"],
    ["29 February of another year", "2026-02-29"],
    ["month 13", "2026-13-01"],
    ["hour 24", "2026-11-30T24:00:00Z"],
    ["an offset of 24 hours", "2026-11-30T06:00:00+24:00"],
    ["a date without dashes (epoch ms would be 1970)", "20261130"],
    ["epoch seconds", "1764483720"],
    ["words", "yesterday"],
    ["text after the zone", "2026-11-30T06:22:00Zjunk"],
    ["nothing", ""],
  ])("refuses %s", (_what, raw) => {
    expect(parseInstant(raw)).toBeUndefined();
  });
});
