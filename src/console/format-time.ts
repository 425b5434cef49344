import { el } from "./dom.js";

/** A time in the viewer's zone, the UTC time on hover; "none" for no time. */
export function timeEl(iso: string | null | undefined): Node {
  if (iso === null || iso === undefined) return document.createTextNode("none");
  const date = new Date(iso);
  const utc = date.toISOString().replace("T", " ").replace(/Z$/, " UTC");
  return el("time", { datetime: date.toISOString(), title: utc, text: date.toLocaleString() });
}

/** "4 s", "3 min 20 s", "2 h 5 min". */
export function duration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min ${s % 60} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}
