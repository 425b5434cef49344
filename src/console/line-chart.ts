import { niceScale } from "./chart-scale.js";
import { svgEl } from "./dom.js";

/** One line of a chart: its name, its CSS class (colour and dash), and a value per minute (null: none). */
export interface Series {
  readonly name: string;
  readonly className: string;
  readonly values: readonly (number | null)[];
}

/** What {@link lineChart} draws. */
export interface LineChartSpec {
  /** When each minute starts, epoch milliseconds, oldest first. */
  readonly times: readonly number[];
  readonly series: readonly Series[];
  /** Counts get whole grid steps. */
  readonly whole: boolean;
  /** A value as the axis and tooltips write it. */
  readonly format: (value: number) => string;
  /** The tooltip of one minute: its values in words. */
  readonly describe: (index: number) => string;
  /** Ids of the figure's caption and summary, which name and describe the chart for assistive technology. */
  readonly labelledBy: string;
  readonly describedBy: string;
}

const WIDTH = 640;
const HEIGHT = 190;
const LEFT = 58;
const RIGHT = 14;
const TOP = 10;
const BOTTOM = 26;
/** A time label every quarter of an hour. */
const LABEL_EVERY_MINUTES = 15;

/** A minute's time of day in the viewer's zone, "10:45". */
export function clockTime(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
}

/** The path of a series: a line through its values, broken where a minute has none. */
function linePath(
  values: readonly (number | null)[],
  x: (index: number) => number,
  y: (value: number) => number,
): { readonly path: string; readonly lone: readonly number[] } {
  let path = "";
  let drawing = false;
  const lone: number[] = [];
  values.forEach((value, index) => {
    if (value === null) {
      drawing = false;
      return;
    }
    path += `${drawing ? "L" : "M"}${x(index).toFixed(1)} ${y(value).toFixed(1)}`;
    const next = values[index + 1];
    if (!drawing && (next === null || next === undefined)) lone.push(index);
    drawing = true;
  });
  return { path, lone };
}

/**
 * A line chart as SVG of its own: a value axis from 0 with round grid lines, a time label each
 * quarter hour, a line per series (a dot where a value stands alone), and a band per minute whose
 * tooltip gives that minute's values. Colours and dashes come from the style sheet by class, so
 * the strict policy needs no inline style, and the legend repeats them in words.
 */
export function lineChart(spec: LineChartSpec): SVGSVGElement {
  const count = spec.times.length;
  const plotWidth = WIDTH - LEFT - RIGHT;
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const slot = plotWidth / Math.max(1, count);
  const x = (index: number): number => LEFT + slot * (index + 0.5);
  const values = spec.series.flatMap((series) => series.values.filter((value) => value !== null));
  const scale = niceScale(Math.max(0, ...values), spec.whole);
  const y = (value: number): number => TOP + plotHeight - (value / scale.max) * plotHeight;

  const chart = svgEl("svg", {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-labelledby": spec.labelledBy,
    "aria-describedby": spec.describedBy,
    className: "chart-svg",
  });
  for (const tick of scale.ticks) {
    chart.append(
      svgEl("line", { x1: LEFT, x2: WIDTH - RIGHT, y1: y(tick), y2: y(tick), className: tick === 0 ? "axis" : "grid" }),
      svgEl("text", { x: LEFT - 6, y: y(tick), className: "tick-y", text: spec.format(tick) }),
    );
  }
  spec.times.forEach((time, index) => {
    if (new Date(time).getMinutes() % LABEL_EVERY_MINUTES !== 0) return;
    chart.append(
      svgEl("line", { x1: x(index), x2: x(index), y1: TOP, y2: TOP + plotHeight, className: "grid" }),
      svgEl("text", { x: x(index), y: HEIGHT - 6, className: "tick-x", text: clockTime(time) }),
    );
  });
  for (const series of spec.series) {
    const { path, lone } = linePath(series.values, x, y);
    if (path !== "") chart.append(svgEl("path", { d: path, className: `line ${series.className}` }));
    for (const index of lone) {
      const value = series.values[index];
      if (value === null || value === undefined) continue;
      chart.append(svgEl("circle", { cx: x(index), cy: y(value), r: 3, className: `dot ${series.className}` }));
    }
  }
  spec.times.forEach((_, index) => {
    const band = svgEl("rect", { x: LEFT + slot * index, y: TOP, width: slot, height: plotHeight, className: "band" });
    band.append(svgEl("title", { text: spec.describe(index) }));
    chart.append(band);
  });
  return chart;
}

/** A legend's sample of a series: a short line in its colour and dash. */
export function swatch(className: string): SVGSVGElement {
  return svgEl("svg", { viewBox: "0 0 24 8", className: "swatch", "aria-hidden": "true" }, [
    svgEl("line", { x1: 1, x2: 23, y1: 4, y2: 4, className: `line ${className}` }),
  ]);
}
