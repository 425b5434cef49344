// Formatting shared by the bench's reports: numbers, ratios, verdicts and Markdown tables.

export const int = (value) =>
  value === null || value === undefined ? "n/a" : Math.round(value).toLocaleString("en-US");
export const ratio = (value) => (value === null || value === undefined ? "n/a" : value.toFixed(2));
export const verdict = (pass) => (pass === null ? "n/a" : pass ? "PASS" : "FAIL");

export function table(header, rows) {
  const lines = [`| ${header.join(" | ")} |`, `|${header.map(() => "---").join("|")}|`];
  for (const row of rows) lines.push(`| ${row.join(" | ")} |`);
  return lines.join("\n");
}
