import { api, describe } from "./admin-api.js";
import { state } from "./console-state.js";
import { byId, el } from "./dom.js";
import { timeEl } from "./format-time.js";
import { clockTime, lineChart, type Series, swatch } from "./line-chart.js";
import { signOut } from "./sign-out.js";
import { millis } from "./status-words.js";
import { setTimelineOff } from "./timeline-availability.js";
import type { Activity, ActivityBucket } from "./timeline-types.js";

/** The counted series, in the order of the status table's columns. */
const COUNTS = [
  { key: "accepted", name: "Accepted", className: "s-accepted" },
  { key: "delivered", name: "Delivered", className: "s-delivered" },
  { key: "retrying", name: "Retrying", className: "s-retrying" },
  { key: "dead_lettered", name: "Dead-lettered", className: "s-dead" },
] as const;

const LATENCIES = [
  { key: "p50_ms", name: "p50", className: "s-p50" },
  { key: "p99_ms", name: "p99", className: "s-p99" },
] as const;

const sum = (buckets: readonly ActivityBucket[], key: (typeof COUNTS)[number]["key"]): number =>
  buckets.reduce((total, bucket) => total + bucket[key], 0);

function legend(id: string, items: readonly { readonly className: string; readonly text: string }[]): void {
  byId(id, HTMLUListElement).replaceChildren(...items.map((item) => el("li", {}, [swatch(item.className), item.text])));
}

/** Puts a chart in its figure's plot box, or says in the summary why there is none. */
function place(figure: string, chart: SVGSVGElement | null, summary: string): void {
  const plot = byId(figure, HTMLElement).querySelector<HTMLElement>(".plot");
  if (plot === null) throw new Error(`#${figure} has no .plot`);
  if (chart === null) plot.replaceChildren();
  else plot.replaceChildren(chart);
  plot.hidden = chart === null;
  byId(`${figure}-summary`, HTMLParagraphElement).textContent = summary;
}

function drawCounts(buckets: readonly ActivityBucket[], times: readonly number[]): void {
  const totals = COUNTS.map((count) => sum(buckets, count.key));
  legend(
    "chart-counts-legend",
    COUNTS.map((count, index) => ({ className: count.className, text: `${count.name}: ${totals[index]} in the hour` })),
  );
  const last = buckets.at(-1);
  const summary =
    totals.every((total) => total === 0) || last === undefined
      ? "No messages in the last hour."
      : `In the last minute (from ${clockTime(Date.parse(last.start))}): ${COUNTS.map((count) => `${last[count.key]} ${count.name.toLowerCase()}`).join(", ")}.`;
  const series: Series[] = COUNTS.map((count) => ({
    name: count.name,
    className: count.className,
    values: buckets.map((bucket) => bucket[count.key]),
  }));
  const chart = lineChart({
    times,
    series,
    whole: true,
    format: String,
    describe: (index) => minuteWords(buckets[index], times[index]),
    labelledBy: "chart-counts-title",
    describedBy: "chart-counts-summary",
  });
  place("chart-counts", chart, summary);
}

function drawLatency(buckets: readonly ActivityBucket[], times: readonly number[]): void {
  legend(
    "chart-latency-legend",
    LATENCIES.map((latency) => ({
      className: latency.className,
      text: `${latency.name} of the messages delivered that minute`,
    })),
  );
  const latest = buckets.findLast((bucket) => bucket.p50_ms !== null || bucket.p99_ms !== null);
  if (latest === undefined) {
    place("chart-latency", null, "No message was delivered in the last hour, so there is no end-to-end time to show.");
    return;
  }
  const series: Series[] = LATENCIES.map((latency) => ({
    name: latency.name,
    className: latency.className,
    values: buckets.map((bucket) => bucket[latency.key]),
  }));
  const chart = lineChart({
    times,
    series,
    whole: false,
    format: (value) => (value === 0 ? "0" : millis(value)),
    describe: (index) => minuteWords(buckets[index], times[index]),
    labelledBy: "chart-latency-title",
    describedBy: "chart-latency-summary",
  });
  const when = clockTime(Date.parse(latest.start));
  place("chart-latency", chart, `The latest minute with deliveries (from ${when}): ${latencyWords(latest)}.`);
}

function latencyWords(bucket: ActivityBucket): string {
  return LATENCIES.map((latency) => {
    const value = bucket[latency.key];
    return `${latency.name} ${value === null ? "none" : millis(value)}`;
  }).join(", ");
}

/** One minute in words, for its tooltip. */
function minuteWords(bucket: ActivityBucket | undefined, time: number | undefined): string {
  if (bucket === undefined || time === undefined) return "";
  const counts = COUNTS.map((count) => `${bucket[count.key]} ${count.name.toLowerCase()}`).join(", ");
  return `${clockTime(time)}: ${counts}; ${latencyWords(bucket)}`;
}

function numberCell(value: number | null): HTMLTableCellElement {
  return el("td", { className: "num", text: value === null ? "none" : String(value) });
}

/** Every minute as numbers, newest first: the charts' values for anyone who cannot see them. */
function drawTable(buckets: readonly ActivityBucket[]): void {
  const rows = [...buckets]
    .reverse()
    .map((bucket) =>
      el("tr", {}, [
        el("th", { scope: "row" }, [timeEl(bucket.start)]),
        ...COUNTS.map((count) => numberCell(bucket[count.key])),
        el("td", { className: "num", text: bucket.p50_ms === null ? "none" : millis(bucket.p50_ms) }),
        el("td", { className: "num", text: bucket.p99_ms === null ? "none" : millis(bucket.p99_ms) }),
      ]),
    );
  byId("activity-table", HTMLTableElement).tBodies[0]?.replaceChildren(...rows);
}

/** Draws `GET /admin/activity`. */
function renderActivity(activity: Activity): void {
  const times = activity.buckets.map((bucket) => Date.parse(bucket.start));
  drawCounts(activity.buckets, times);
  drawLatency(activity.buckets, times);
  drawTable(activity.buckets);
  byId("activity-charts", HTMLDivElement).hidden = false;
  byId("activity-details", HTMLDetailsElement).hidden = false;
}

function hideCharts(): void {
  state.activity = "";
  byId("activity-charts", HTMLDivElement).hidden = true;
  byId("activity-details", HTMLDetailsElement).hidden = true;
}

/**
 * Asks for the last hour again and redraws it when it changed. A failure is said in the
 * section's own line and hides the charts, without stopping the rest of the console; a 404 (the
 * timeline is off) is asked no more until the next sign-in.
 */
export async function refreshActivity(): Promise<void> {
  if (state.timelineOff !== null) return;
  const line = byId("activity-state", HTMLParagraphElement);
  let answer: Awaited<ReturnType<typeof api>>;
  try {
    answer = await api("GET", "/admin/activity");
  } catch (error) {
    line.textContent = `Could not reach the service for the activity (${error instanceof Error ? error.message : String(error)}).`;
    return;
  }
  if (answer.status === 401) {
    signOut(`Signed out: the API answered ${describe(answer)}`);
    return;
  }
  if (answer.status === 404) {
    hideCharts();
    setTimelineOff(describe(answer));
    line.textContent = `No charts: the API answered ${describe(answer)} Reload this page once it is on.`;
    return;
  }
  if (!answer.ok) {
    hideCharts();
    line.textContent = `The activity could not be shown: the API answered ${describe(answer)}`;
    return;
  }
  setTimelineOff(null);
  line.replaceChildren(
    "One point a minute, from the service's own data; updated ",
    timeEl(new Date().toISOString()),
    ". Point at a minute for its numbers, or open the table below.",
  );
  if (answer.text === state.activity) return;
  state.activity = answer.text;
  renderActivity(answer.data as Activity);
}
