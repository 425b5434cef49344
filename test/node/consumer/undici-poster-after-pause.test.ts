/**
 * A process that was stopped (SIGSTOP, a frozen VM) past a POST's time limit wakes with the
 * limit's timer due and the receiver's answer already waiting on the socket. The answer counts:
 * a false "no answer" would count towards the shared receiver circuit and page an operator. The
 * receiver runs in a process of its own, so that it answers while this one is held.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { type ClosablePoster, createUndiciPoster } from "../../../src/node/consumer/undici-poster.js";

/** Answers each POST 200 after `delay` ms; prints its port, then `got` for each request it reads. */
const RECEIVER = `
const delay = Number(process.argv[1]);
require("node:http").createServer((request, response) => {
  request.resume();
  request.on("end", () => {
    process.stdout.write("got\\n");
    setTimeout(() => response.end("ok"), delay);
  });
}).listen(0, "127.0.0.1", function () { process.stdout.write(this.address().port + "\\n"); });
`;

let receiver: ChildProcess | undefined;
let poster: ClosablePoster | undefined;

afterEach(async () => {
  await poster?.close();
  receiver?.kill("SIGKILL");
  receiver = undefined;
  poster = undefined;
});

/** Holds this thread, as a stopped process is held: no timer, no socket is served meanwhile. */
function hold(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

describe("the undici poster, woken past a POST's time limit", () => {
  it("takes the answer that arrived meanwhile rather than calling the POST unanswered", async () => {
    const child = spawn(process.execPath, ["-e", RECEIVER, "150"], { stdio: ["ignore", "pipe", "inherit"] });
    receiver = child;
    const lines: string[] = [];
    let arrived: () => void = () => undefined;
    child.stdout?.on("data", (chunk: Buffer) => {
      lines.push(
        ...chunk
          .toString()
          .split("\n")
          .filter((line) => line !== ""),
      );
      arrived();
    });
    /** The receiver's next line, once it has printed it. */
    const next = async (): Promise<string> => {
      while (lines.length === 0) await new Promise<void>((resolve) => (arrived = resolve));
      return lines.shift() ?? "";
    };
    const url = `http://127.0.0.1:${await next()}/replies`;
    poster = createUndiciPoster();
    // A first POST opens the connection the second one goes out on at once.
    await poster.post(url, "{}", { "content-type": "application/json" }, 5_000);
    await next();

    const answered = poster.post(url, "{}", { "content-type": "application/json" }, 100);
    await next();
    // Held past the limit (due at 100 ms) and past the answer (sent at 150 ms).
    hold(600);
    await expect(answered).resolves.toMatchObject({ status: 200 });
  });
});
