/** A suite of tests, named by what follows `npm run test:` (`test` is `npm test`). */
export type Suite = "test" | "proxies" | "browser" | "image";

/** A program some test command needs (see test-tools.mjs). */
export interface TestTool {
  readonly name: string;
  /** The Debian package that has it. */
  readonly package: string;
  readonly suites: readonly Suite[];
  /** What the tests use it for. */
  readonly why: string;
  /** Its path, or undefined when it is not installed. */
  find(): string | undefined;
}

/** The command that runs each suite. */
export const SUITES: Readonly<Record<Suite, string>>;

/** Every program, with its package and the suites that need it. */
export const TOOLS: readonly TestTool[];

/** Where a program is on PATH or in the sbin folders, or undefined. */
export function locate(name: string): string | undefined;

/** The tools `suites` need that are not installed. */
export function missingTools(suites: readonly Suite[]): TestTool[];

/** The message naming each missing program, its package, and how to install them. */
export function missingMessage(command: string, missing: readonly TestTool[]): string;
