import { holdsNoNul } from "./admin-problems.js";

/** A position in the oldest-first order of dead letters: after this failure time and id. */
export interface CursorPosition {
  readonly diedAt: number;
  readonly id: string;
}

/**
 * Encodes a position as base64url of `<diedAt>:<id>`: opaque to clients, who only hand it
 * back, and free of characters that would need escaping in a query string.
 */
export function encodeCursor(position: CursorPosition): string {
  const bytes = new TextEncoder().encode(`${position.diedAt}:${position.id}`);
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** The position a cursor stands for, or undefined when it is not one this service made. */
export function decodeCursor(cursor: string): CursorPosition | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  let text: string;
  try {
    const binary = atob(cursor.replace(/-/g, "+").replace(/_/g, "/"));
    text = new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(binary, (char) => char.charCodeAt(0)));
  } catch {
    return undefined;
  }
  const match = /^(\d+):(.+)$/s.exec(text);
  const [, diedAt, id] = match ?? [];
  if (diedAt === undefined || id === undefined || !holdsNoNul(id)) return undefined;
  const at = Number(diedAt);
  // Past this, the number is not the one written, and a store's integer column refuses it.
  return Number.isSafeInteger(at) ? { diedAt: at, id } : undefined;
}
