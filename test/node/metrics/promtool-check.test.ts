import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { type ServiceHarness, startHarness } from "../../support/node-service.js";
import { waitFor } from "../../support/wait-for.js";
import { promtool } from "./promtool.js";
import { scrape } from "./scrape.js";

let harness: ServiceHarness | undefined;

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

describe("promtool on what the service ships", () => {
  it("accepts the /metrics output of a service that delivered, refused and dead-lettered", async () => {
    let calls = 0;
    harness = await startHarness(
      { delivery: { initial_delay_ms: 10, max_delay_ms: 20, max_attempts: 2 } },
      { status: () => (calls++ < 1 ? 200 : 500) },
    );
    const running = harness;
    await running.post({ sender_id: "a", text: "ok" });
    await waitFor(() => (running.replies.length === 1 ? true : undefined));
    await running.post({ sender_id: "b", text: "dead" });
    await running.post({ sender_id: "a", text: "x" }, { authorization: "Bearer wrong" });
    await waitFor(() => (running.logs.some((line) => String(line.msg).startsWith("dead letter")) ? true : undefined));
    const result = promtool(["check", "metrics"], await scrape(running.baseUrl));
    // Not a lint finding either: prom-client's gauges named as counters are left out.
    expect(result.output.split("\n").filter((line) => line !== "")).toEqual([]);
    expect(result.status).toBe(0);
    expect(result.output).not.toMatch(/error while linting|text format parsing error/);
  });

  it("filters every query of docs/grafana-dashboard.json by the dashboard's job, and by its channel where a series has one", () => {
    const queries = dashboardQueries();
    expect(queries.length).toBeGreaterThan(0);
    for (const expr of queries) expect(expr).toContain('job=~"$job"');
    const perBrainOrProcess =
      /^(sum|max) by \(brain\) |^process_|^nodejs_|^max\(webhook_channel_oldest_pending_seconds/;
    for (const expr of queries.filter((query) => !perBrainOrProcess.test(query)))
      expect(expr).toContain('channel=~"$channel"');
  });

  it("parses every query of docs/grafana-dashboard.json, with Grafana's variables filled in", () => {
    const rules = join(mkdtempSync(join(tmpdir(), "dashboard-")), "dashboard-rules.yml");
    const lines = ["groups:", "  - name: dashboard", "    rules:"];
    dashboardQueries().forEach((expr, index) => {
      const filled = expr.replaceAll("$__rate_interval", "5m").replaceAll("$channel", ".*").replaceAll("$job", ".*");
      lines.push(`      - record: dashboard:query_${index}`, `        expr: ${JSON.stringify(filled)}`);
    });
    writeFileSync(rules, `${lines.join("\n")}\n`);
    const result = promtool(["check", "rules", rules]);
    expect(result.status, result.output).toBe(0);
  });

  it("accepts docs/alerts.yml as a rule file", () => {
    const rules = fileURLToPath(new URL("../../../docs/alerts.yml", import.meta.url));
    const result = promtool(["check", "rules", rules]);
    expect(result.status, result.output).toBe(0);
  });
});

/** The PromQL of every panel of the shipped dashboard. */
function dashboardQueries(): string[] {
  const path = fileURLToPath(new URL("../../../docs/grafana-dashboard.json", import.meta.url));
  const dashboard = JSON.parse(readFileSync(path, "utf8")) as { panels: { targets: { expr: string }[] }[] };
  return dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
}
