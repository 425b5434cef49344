// A hand-written SVG of end-to-end latency (p50, p99) against offered rate. The latency
// axis is logarithmic: below the knee latencies are fractions of a millisecond, past it
// they jump by orders of magnitude, and a linear axis would flatten the part that matters.

const WIDTH = 720;
const HEIGHT = 420;
const MARGIN = { left: 70, right: 40, top: 40, bottom: 60 };
const PLOT_W = WIDTH - MARGIN.left - MARGIN.right;
const PLOT_H = HEIGHT - MARGIN.top - MARGIN.bottom;
const FLOOR_MS = 0.01; // log axis: anything at or below 10 µs is drawn at the floor
const TARGET_MS = 5;

const escapeXml = (text) => String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;");

function niceStep(max) {
  const raw = max / 6;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 2.5, 5, 10].map((factor) => factor * magnitude).find((step) => step >= raw) ?? raw;
}

// Solid lines for the first series (the stock config), then one dash pattern per series: a full
// run with --baseline has five (stock and durable of each build, and delivery_thread).
const DASHES = ["", "7 4", "2 3", "10 3 2 3", "1 6"];

/**
 * Renders the chart of one to five series, [{ label, steps }] with steps from
 * bench/end-to-end.mjs, as an SVG document.
 */
export function renderChart(series) {
  const all = series.flatMap(({ steps }) => steps);
  const maxRate = Math.max(1_000, ...all.map((step) => step.offered));
  const maxMs = Math.max(TARGET_MS * 2, ...all.filter((step) => step.p99 !== null).map((step) => step.p99));
  const logMin = Math.log10(FLOOR_MS);
  const logMax = Math.ceil(Math.log10(maxMs));
  const x = (rate) => MARGIN.left + (rate / maxRate) * PLOT_W;
  const y = (ms) => MARGIN.top + PLOT_H - ((Math.log10(Math.max(FLOOR_MS, ms)) - logMin) / (logMax - logMin)) * PLOT_H;

  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" viewBox="0 0 ${WIDTH} ${HEIGHT}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${HEIGHT}" fill="white"/>`,
    `<text x="${WIDTH / 2}" y="22" text-anchor="middle" font-size="14">End-to-end latency (200 → reply at receiver) against offered rate</text>`,
  ];

  for (let exponent = logMin; exponent <= logMax; exponent += 1) {
    const value = 10 ** exponent;
    const label = value >= 1 ? String(value) : value.toFixed(-exponent);
    parts.push(
      `<line x1="${MARGIN.left}" x2="${MARGIN.left + PLOT_W}" y1="${y(value)}" y2="${y(value)}" stroke="#ddd"/>`,
      `<text x="${MARGIN.left - 8}" y="${y(value) + 4}" text-anchor="end">${label}</text>`,
    );
  }
  const step = niceStep(maxRate);
  for (let rate = 0; rate <= maxRate; rate += step) {
    parts.push(
      `<line x1="${x(rate)}" x2="${x(rate)}" y1="${MARGIN.top}" y2="${MARGIN.top + PLOT_H}" stroke="#eee"/>`,
      `<text x="${x(rate)}" y="${MARGIN.top + PLOT_H + 18}" text-anchor="middle">${rate.toLocaleString("en-US")}</text>`,
    );
  }
  parts.push(
    `<rect x="${MARGIN.left}" y="${MARGIN.top}" width="${PLOT_W}" height="${PLOT_H}" fill="none" stroke="#333"/>`,
    `<text x="${MARGIN.left + PLOT_W / 2}" y="${HEIGHT - 18}" text-anchor="middle">offered rate (messages/s)</text>`,
    `<text transform="translate(18 ${MARGIN.top + PLOT_H / 2}) rotate(-90)" text-anchor="middle">latency (ms, log scale)</text>`,
    `<line x1="${MARGIN.left}" x2="${MARGIN.left + PLOT_W}" y1="${y(TARGET_MS)}" y2="${y(TARGET_MS)}" stroke="#c00" stroke-dasharray="6 4"/>`,
    `<text x="${MARGIN.left + PLOT_W - 4}" y="${y(TARGET_MS) - 5}" text-anchor="end" fill="#c00">p99 target ${TARGET_MS} ms</text>`,
  );

  series.forEach(({ label: setup, steps }, index) => {
    const points = steps.filter((step) => step.p50 !== null && step.p99 !== null);
    const dash = DASHES[index] ?? "";
    for (const [key, color, label] of [
      ["p50", "#1f77b4", "p50"],
      ["p99", "#ff7f0e", "p99"],
    ]) {
      const path = points.map((point) => `${x(point.offered).toFixed(1)},${y(point[key]).toFixed(1)}`).join(" ");
      parts.push(
        `<polyline points="${path}" fill="none" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""}/>`,
      );
      for (const point of points) {
        // A step with a 503, a lost reply or a sender that fell behind gets a hollow marker.
        const fill = point.clean ? color : "white";
        parts.push(
          `<circle cx="${x(point.offered).toFixed(1)}" cy="${y(point[key]).toFixed(1)}" r="4" fill="${fill}" stroke="${color}" stroke-width="2">` +
            `<title>${escapeXml(`${setup}, ${label} at ${point.offered} msg/s: ${point[key].toFixed(2)} ms${point.clean ? "" : " (not clean)"}`)}</title></circle>`,
        );
      }
    }
  });
  const rows = [
    ["p50", "#1f77b4", ""],
    ["p99", "#ff7f0e", ""],
  ];
  series.forEach(({ label }, index) => {
    if (series.length > 1) rows.push([label, "#555", DASHES[index] ?? ""]);
  });
  // Bottom right: latencies there are low only below the knee, which is at the left.
  const legendH = 26 + rows.length * 18;
  const legendX = MARGIN.left + PLOT_W - 290;
  const legendTop = MARGIN.top + PLOT_H - legendH - 6;
  parts.push(`<rect x="${legendX - 6}" y="${legendTop}" width="290" height="${legendH}" fill="white" stroke="#ccc"/>`);
  rows.forEach(([label, color, dash], row) => {
    const lineY = legendTop + 14 + row * 18;
    parts.push(
      `<line x1="${legendX}" x2="${legendX + 20}" y1="${lineY}" y2="${lineY}" stroke="${color}" stroke-width="2"${dash ? ` stroke-dasharray="${dash}"` : ""}/>`,
      `<text x="${legendX + 26}" y="${lineY + 4}">${escapeXml(label)}</text>`,
    );
  });
  parts.push(
    `<text x="${legendX}" y="${legendTop + 18 + rows.length * 18}">hollow marker: 503s, lost replies or sender behind</text>`,
    "</svg>",
    "",
  );
  return parts.join("\n");
}
