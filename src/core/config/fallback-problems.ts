import { fallbackNames } from "./brain-schema.js";
import { type ConfigProblem, formatJsonPath } from "./config-problem.js";
import type { BrainConfig } from "./config-schema.js";

/**
 * The problems of the brains' `fallback` lists, each at `brains.<name>.fallback[i]`: a name
 * that is no brain (`known` holds the built-in and defined names), a brain naming itself, a
 * name listed twice, and cycles (a → b → a), reported once each, at the entry that closes it.
 * A cycle is refused although a chain would ask each brain once: it is a mistake, and it makes
 * the order in which brains are asked depend on where the chain starts.
 */
export function fallbackProblems(
  definitions: Readonly<Record<string, BrainConfig>>,
  known: ReadonlySet<string>,
): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  /** The edges the cycle search follows: valid entries only, so each mistake is said once. */
  const edges = new Map<string, { target: string; index: number }[]>();
  for (const [name, definition] of Object.entries(definitions)) {
    const valid: { target: string; index: number }[] = [];
    fallbackNames(definition).forEach((target, index) => {
      const path = formatJsonPath(["brains", name, "fallback", index]);
      const earlier = valid.find((edge) => edge.target === target);
      if (target === name) {
        problems.push({
          path,
          message: `brain "${name}" names itself as its fallback`,
          fix: "remove it: a failed call is retried by the delivery policy; a fallback is another brain",
        });
      } else if (!known.has(target)) {
        const others = [...known].filter((other) => other !== name);
        problems.push({
          path,
          message: `no brain is named "${target}"`,
          fix: `use one of ${others.map((other) => JSON.stringify(other)).join(", ")}, or define it under "brains"`,
        });
      } else if (earlier !== undefined) {
        problems.push({
          path,
          message: `"${target}" is already listed at fallback[${earlier.index}]`,
          fix: "list each brain once",
        });
      } else valid.push({ target, index });
    });
    edges.set(name, valid);
  }
  problems.push(...cycleProblems(edges));
  return problems;
}

/** Depth-first search; an edge back to a brain on the current path closes a cycle. */
function cycleProblems(edges: ReadonlyMap<string, readonly { target: string; index: number }[]>): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (name: string): void => {
    path.push(name);
    for (const { target, index } of edges.get(name) ?? []) {
      const at = path.indexOf(target);
      if (at >= 0) {
        const cycle = [...path.slice(at), target].map((brain) => JSON.stringify(brain)).join(" → ");
        problems.push({
          path: formatJsonPath(["brains", name, "fallback", index]),
          message: `the fallbacks form a cycle: ${cycle}`,
          fix: `remove "${target}" here or break the cycle elsewhere: a fallback chain must end`,
        });
      } else if (!done.has(target)) visit(target);
    }
    path.pop();
    done.add(name);
  };
  for (const name of edges.keys()) if (!done.has(name)) visit(name);
  return problems;
}
