/** Runs `callback` after `ms`; returns what cancels it. */
export type Schedule = (callback: () => void, ms: number) => () => void;

/** `setTimeout` that does not hold a Node process open (elsewhere, plain `setTimeout`). */
export const unrefTimeout: Schedule = (callback, ms) => {
  const handle = setTimeout(callback, ms);
  const held: unknown = handle;
  if (typeof held === "object" && held !== null && "unref" in held && typeof held.unref === "function") held.unref();
  return () => clearTimeout(handle);
};
