import { acceptBytes, createRing, readBaselineOptions } from "./baseline-checks.mjs";
import { problem, readWebhook, send, serveBaseline } from "./baseline-http.mjs";

const { capacity, drop, secret } = readBaselineOptions();
const enqueue = createRing(capacity, drop);

function answer(response, result) {
  if (result.status === 200) send(response, 200, result.body);
  else problem(response, result.status, result.code, result.detail, result.extra, result.headers);
}

function handleWebhook(request, response) {
  readWebhook(request, response, secret, (bytes) => answer(response, acceptBytes(bytes, enqueue)));
}

const server = serveBaseline(handleWebhook);
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
