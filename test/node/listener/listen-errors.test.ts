/**
 * Why a listener could not listen, as the start's `cannot start` line says it: the address as a
 * client would write it (IPv6 in brackets), and the reason.
 */
import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { listen } from "../../../src/node/listener/listen.js";

describe("listen", () => {
  it("names an IPv6 address in brackets when its port is taken", async () => {
    const holder = createServer();
    const port = await listen(holder, "::1", 0);
    try {
      await expect(listen(createServer(), "::1", port)).rejects.toThrow(
        `cannot listen on [::1]:${port}: the address is already in use`,
      );
    } finally {
      await new Promise<void>((resolve) => holder.close(() => resolve()));
    }
  });
});
