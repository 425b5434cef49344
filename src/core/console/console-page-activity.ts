import { html } from "hono/html";
import type { HtmlEscapedString } from "hono/utils/html";

/**
 * The console's charts of the last hour (`GET /admin/activity`): messages per minute and the
 * end-to-end time. The script draws them as SVG of its own (no library, nothing from another
 * origin); each says its numbers in a sentence, and the table below has every minute.
 */
export function activitySection(): HtmlEscapedString | Promise<HtmlEscapedString> {
  return html`<section aria-labelledby="activity-title">
          <h2 id="activity-title">The last hour</h2>
          <p class="meta" id="activity-state">Not loaded yet.</p>
          <div id="activity-charts" class="charts" hidden>
            <figure id="chart-counts" class="chart">
              <figcaption id="chart-counts-title">Messages per minute</figcaption>
              <ul class="legend" id="chart-counts-legend"></ul>
              <div class="plot"></div>
              <p class="meta" id="chart-counts-summary"></p>
            </figure>
            <figure id="chart-latency" class="chart">
              <figcaption id="chart-latency-title">End to end: accepted to last reply delivered</figcaption>
              <ul class="legend" id="chart-latency-legend"></ul>
              <div class="plot"></div>
              <p class="meta" id="chart-latency-summary"></p>
            </figure>
          </div>
          <details id="activity-details" hidden>
            <summary>Every minute as numbers</summary>
            <div class="scroll" tabindex="0" role="region" aria-label="Every minute of the last hour">
              <table id="activity-table">
                <thead>
                  <tr>
                    <th scope="col">Minute</th>
                    <th scope="col" class="num">Accepted</th>
                    <th scope="col" class="num">Delivered</th>
                    <th scope="col" class="num">Retrying</th>
                    <th scope="col" class="num">Dead-lettered</th>
                    <th scope="col" class="num">p50</th>
                    <th scope="col" class="num">p99</th>
                  </tr>
                </thead>
                <tbody></tbody>
              </table>
            </div>
          </details>
        </section>`;
}
