/** One sample of a Prometheus text exposition: the value of `name` whose labels include `labels`. */
export function sample(text: string, name: string, labels: Readonly<Record<string, string>> = {}): number | undefined {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    const series = line.slice(0, space);
    const bare = series.split("{")[0];
    if (bare !== name) continue;
    const labelText = series.includes("{") ? series.slice(series.indexOf("{") + 1, -1) : "";
    const have = labelText === "" ? [] : labelText.split(",");
    if (wanted.every((pair) => have.includes(pair))) return Number(line.slice(space + 1));
  }
  return undefined;
}

/** GET /metrics of a service, as text (throws on anything but 200). */
export async function scrape(baseUrl: string): Promise<string> {
  const response = await fetch(`${baseUrl}/metrics`);
  if (response.status !== 200) throw new Error(`/metrics answered ${response.status}`);
  return response.text();
}
