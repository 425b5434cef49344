import { problemsOf } from "./answer-checks.js";
import { clip, describeCase } from "./describe-case.js";
import type { FuzzCase } from "./fuzz-case.js";

function toRequest(c: FuzzCase): Request {
  const headers = new Headers();
  for (const [name, value] of c.headers) headers.append(name, value);
  const init: RequestInit = { method: c.method, headers };
  if (c.body !== undefined) init.body = c.body;
  return new Request(`http://localhost${c.path}`, init);
}

/** How one request went: its status (or that the app threw) and what was wrong with the answer. */
export interface Outcome {
  readonly status: number | "threw";
  readonly failures: readonly string[];
}

/** What answers the fuzz's requests: the core app's `request` on Node, the Worker's `fetch` in workerd. */
export type Answerer = (request: Request) => Response | Promise<Response>;

/** Sends one case to `answer` and checks the answer; a throw is an outcome, not an error. */
export async function sendTo(answer: Answerer, c: FuzzCase): Promise<Outcome> {
  let request: Request;
  try {
    request = toRequest(c);
  } catch (error) {
    // The generator made something a client cannot send: its fault, not the service's.
    throw new Error(`the fuzz made an unsendable request (${String(error)}): ${describeCase(c)}`);
  }
  try {
    const response = await answer(request);
    const text = await response.text();
    const problems = problemsOf(c, response, text);
    return {
      status: response.status,
      failures: problems.map((problem) => `${problem} (${response.status} ${clip(text, 300)}) <- ${describeCase(c)}`),
    };
  } catch (error) {
    const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
    return { status: "threw", failures: [`threw ${stack} <- ${describeCase(c)}`] };
  }
}

/** Sends one case through the app's `request` (fuzz-app.ts) and checks the answer. */
export function send(f: { readonly app: { request: Answerer } }, c: FuzzCase): Promise<Outcome> {
  return sendTo((request) => f.app.request(request), c);
}
