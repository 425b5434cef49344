import { errorMessage, notify } from "./notice.js";

/** An event handler that runs `run`'s promise, showing what went wrong instead of leaving it unhandled. */
export function guarded<E extends Event>(run: (event: E) => Promise<unknown>): (event: E) => void {
  return (event) => {
    run(event).catch((error: unknown) => notify(`Something went wrong: ${errorMessage(error)}`, true));
  };
}
