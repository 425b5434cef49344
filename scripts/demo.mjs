// `npm run demo`: the sample receiver and the service side by side, so a newcomer sees a
// message go in and the echo reply come out. Ctrl-C stops both.
import { spawn } from "node:child_process";

if (!process.env.WEBHOOK_SECRET) {
  process.stderr.write("WEBHOOK_SECRET is not set. Run for example:\n  WEBHOOK_SECRET=dev-secret npm run demo\n");
  process.exit(1);
}
const children = [
  spawn(process.execPath, ["dist/receiver.js"], { stdio: "inherit" }),
  spawn(process.execPath, ["dist/node.js", ...process.argv.slice(2)], { stdio: "inherit" }),
];
let exiting = false;
for (const child of children) {
  child.on("exit", (code) => {
    if (exiting) return;
    exiting = true;
    for (const other of children) other.kill("SIGTERM");
    process.exitCode = code ?? 0;
  });
}
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    exiting = true;
    for (const child of children) child.kill(signal);
  });
}
