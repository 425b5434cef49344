import { describe, expect, it } from "vitest";
import { foundHash, parseFoundHash } from "../../src/console/message-links.js";

describe("the console's addresses of a message or conversation", () => {
  it("round-trips any id, whatever characters it holds", () => {
    for (const id of ["0f6c2d1e-8d1b-4d55", "alice", "a b+c&d=e#f%g/h?", "Zoë 会話"]) {
      expect(parseFoundHash(foundHash("message", id))).toEqual({ kind: "message", id });
      expect(parseFoundHash(foundHash("conversation", id))).toEqual({ kind: "conversation", id });
    }
  });

  it("names nothing for an empty or unknown fragment", () => {
    for (const hash of ["", "#", "#message=", "#main", "#other=1"]) expect(parseFoundHash(hash)).toBeUndefined();
  });
});
