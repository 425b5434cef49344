/** What {@link el} sets: `text` the text, `className` the class, `key` `data-key`; null, undefined and false are left out. */
export type Attributes = Readonly<Record<string, string | number | boolean | null | undefined>>;

/** A child {@link el} appends: a node, or a string as text. */
export type Child = Node | string;

/**
 * The page's element `id`, checked to be the element the page has there: a missing or
 * different element is a mismatch of the page and this script, and fails loudly.
 */
export function byId<T extends HTMLElement>(id: string, type: abstract new () => T): T {
  const node = document.getElementById(id);
  if (!(node instanceof type)) throw new Error(`the page has no ${type.name} #${id}`);
  return node;
}

/** An element with text and attributes, built with `textContent`, never with markup from data. */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  children: readonly Child[] = [],
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "className") node.className = String(value);
    else if (name === "key") node.dataset.key = String(value);
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children);
  return node;
}

/**
 * Redraws what `container` holds with `redraw`, and gives the focus back to the control with
 * the same `data-key` if one inside had it (else to `fallback`), so that a live refresh never
 * takes the focus from someone working with the keyboard.
 */
export function keepingFocus(container: HTMLElement, fallback: HTMLElement, redraw: () => void): void {
  const active = document.activeElement;
  const key = active instanceof HTMLElement && container.contains(active) ? active.dataset.key : undefined;
  redraw();
  if (key === undefined) return;
  const again = container.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
  (again ?? fallback).focus();
}

/** The scrolling box a table sits in (each table of the page has one). */
export function scrollBox(table: HTMLElement): HTMLElement {
  const box = table.closest<HTMLElement>(".scroll");
  if (box === null) throw new Error(`#${table.id} is not in a .scroll box`);
  return box;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element with attributes (and `text`, `className` as for {@link el}), for the charts. */
export function svgEl<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  children: readonly Child[] = [],
): SVGElementTagNameMap[K] {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === "text") node.textContent = String(value);
    else if (name === "className") node.setAttribute("class", String(value));
    else node.setAttribute(name, value === true ? "" : String(value));
  }
  node.append(...children);
  return node;
}
