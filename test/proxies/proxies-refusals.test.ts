// `npm run test:proxies`: the documented recipes in front of the service, for a request the
// service refuses on its head alone (a wrong secret, a wrong media type) while its body, within
// the 1 MiB limit, is still arriving. nginx buffers the body and sends it whole, Caddy streams it:
// either way the client must get the service's own problem (401, 415), not a 502 made by the
// proxy because the service closed the connection with the body unread (a reset).
import { describe, expect, it } from "vitest";
import { MIB, messageOfSize } from "./https-client.js";
import { useProxyStack } from "./proxy-stack.js";

const stack = useProxyStack();
const ATTEMPTS = 8;

describe.each([
  ["nginx", 10],
  ["caddy", 20],
] as const)("%s with the documented recipe, over HTTPS", (name, subnet) => {
  it.each([
    ["a wrong secret", { authorization: "Bearer wrong-secret" }, 401, "unauthorized", 0],
    ["a wrong media type", { "content-type": "text/plain" }, 415, "unsupported_media_type", 100],
  ] as const)(
    "answers a 1 MiB body with %s by the service's problem, never a 502",
    async (_what, headers, status, code, from) => {
      const statuses: string[] = [];
      for (let attempt = 0; attempt < ATTEMPTS; attempt += 1) {
        // Each attempt its own client address: the auth-failure limit is not what is tested here.
        const answer = await stack.postMessage(name, messageOfSize(MIB, `${name}-refused`), {
          headers,
          localAddress: `127.0.${subnet}.${from + attempt + 1}`,
        });
        statuses.push(answer.status === status && answer.body.includes(`"code":"${code}"`) ? "ok" : `${answer.status}`);
      }
      expect(statuses).toEqual(Array.from({ length: ATTEMPTS }, () => "ok"));
    },
  );
});
