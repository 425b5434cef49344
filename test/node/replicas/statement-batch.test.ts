import { describe, expect, it } from "vitest";
import { createStatementBatch } from "../../../src/node/replicas/statement-batch.js";

describe("createStatementBatch", () => {
  it("answers the items asked in one turn with one run, each with its own answer, in order", async () => {
    const runs: number[][] = [];
    const ask = createStatementBatch<number, string>(async (items) => {
      runs.push([...items]);
      return items.map((item) => `answer ${item}`);
    });
    const answers = await Promise.all([ask(1), ask(2), ask(3)]);
    expect(answers).toEqual(["answer 1", "answer 2", "answer 3"]);
    expect(runs).toEqual([[1, 2, 3]]);
  });

  it("gathers what is asked while a run is under way into the next run, one run at a time", async () => {
    const runs: number[][] = [];
    let running = 0;
    let release: () => void = () => undefined;
    const ask = createStatementBatch<number, number>(async (items) => {
      running += 1;
      expect(running).toBe(1);
      runs.push([...items]);
      if (runs.length === 1) await new Promise<void>((resolve) => (release = resolve));
      running -= 1;
      return [...items];
    });
    const first = ask(1);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [ask(2), ask(3)];
    await new Promise((resolve) => setImmediate(resolve));
    release();
    expect(await Promise.all([first, ...later])).toEqual([1, 2, 3]);
    expect(runs).toEqual([[1], [2, 3]]);
  });

  it("rejects every item of a run that fails, and runs the next batch all the same", async () => {
    let fail = true;
    const ask = createStatementBatch<number, number>(async (items) => {
      if (fail) throw new Error("connection lost");
      return [...items];
    });
    const failed = await Promise.allSettled([ask(1), ask(2)]);
    expect(failed.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await ask(3)).toBe(3);
  });

  it("rejects an item a run gave no answer for", async () => {
    const ask = createStatementBatch<number, number>(async () => []);
    await expect(ask(1)).rejects.toThrow("no answer");
  });
});
