/** What the address's fragment can show: `#message=<id>` or `#conversation=<id>`. */
export type FoundKind = "message" | "conversation";

/** The fragment that shows a message's timeline or a conversation's messages; a link to it is a plain `<a href>`. */
export function foundHash(kind: FoundKind, id: string): string {
  return `#${kind}=${encodeURIComponent(id)}`;
}

/** What the address's fragment asks to show, if it asks. */
export function parseFoundHash(hash: string): { readonly kind: FoundKind; readonly id: string } | undefined {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  for (const kind of ["message", "conversation"] as const) {
    const id = params.get(kind);
    if (id !== null && id !== "") return { kind, id };
  }
  return undefined;
}
