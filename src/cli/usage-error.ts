/** Thrown for a usage error (a bad option or argument), which the CLI turns into exit status 2. */
export class UsageError extends Error {}
