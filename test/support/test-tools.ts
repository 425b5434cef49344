/**
 * The programs tests need besides Node (scripts/test-tools.mjs holds the one table). A test file
 * that needs one asks for it here and fails at once, naming it and how to install it, exactly as
 * the test commands do before they start: a missing program never turns into a skipped test.
 */
import { missingMessage, SUITES, type Suite, TOOLS } from "../../scripts/test-tools.mjs";

/** The path of `name`, which `suite` needs; throws the test commands' message when it is not installed. */
export function requireTool(name: string, suite: Suite): string {
  const tool = TOOLS.find((candidate) => candidate.name === name);
  if (tool === undefined) throw new Error(`scripts/test-tools.mjs has no program named ${name}`);
  const path = tool.find();
  if (path === undefined) throw new Error(missingMessage(SUITES[suite], [tool]));
  return path;
}
