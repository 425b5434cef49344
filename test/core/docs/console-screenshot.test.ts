import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const root = new URL("../../../", import.meta.url);
/** Every PNG file starts with these eight bytes. */
const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

describe("docs/console.png", () => {
  it("is a PNG of a useful size, as UPDATE_SCREENSHOT=1 npm run test:browser takes it", () => {
    const bytes = readFileSync(new URL("docs/console.png", root));
    expect([...bytes.subarray(0, 8)]).toEqual(PNG_SIGNATURE);
    // Width and height, big-endian, in the IHDR chunk.
    expect(bytes.readUInt32BE(16)).toBeGreaterThanOrEqual(800);
    expect(bytes.readUInt32BE(20)).toBeGreaterThanOrEqual(400);
  });

  it("is shown in the console section of docs/operations.md", () => {
    const operations = readFileSync(new URL("docs/operations.md", root), "utf8");
    const section = operations.split("\n## Console\n")[1]?.split("\n## ")[0] ?? "";
    expect(section).toMatch(/!\[[^\]]+\]\(console\.png\)/);
  });
});
