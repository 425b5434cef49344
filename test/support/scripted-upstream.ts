/**
 * A real HTTP upstream (a receiver, a brain's server) for tests that cannot hold a Node server
 * object: the `workers` project's tests run inside workerd, so they script this server over
 * HTTP instead. Each test makes a scenario of its own (`POST /_scenario`), points its
 * `outbound_url` or `base_url` under the scenario's prefix (`/s/<id>/...`), and reads back
 * what reached it (`GET /_scenario/<id>`). A scenario answers its n-th request with the n-th
 * reply of its script, the last one repeating: a status, headers, a JSON body, after a delay,
 * or never (a hang, as a stuck server does). `PUT /_scenario/<id>` replaces the script (the
 * count starts again), `DELETE /_scenario/<id>` forgets the scenario and cuts its hanging
 * requests. The wire format is mirrored by the client in test/workers/support/scripted-upstream-client.ts.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { ScenarioRecord, ScriptedReply, ScriptedRequest } from "../shared/scripted-upstream-wire.js";

/** The running upstream. */
export interface ScriptedUpstream {
  /** `http://127.0.0.1:<port>`. */
  readonly origin: string;
  close(): Promise<void>;
}

interface Scenario {
  replies: ScriptedReply[];
  /** Requests answered by the current script: the index of the next reply. */
  served: number;
  readonly requests: ScriptedRequest[];
  inFlight: number;
  maxInFlight: number;
  readonly open: Set<ServerResponse>;
}

/** What the server answers: a status, and a JSON body when there is one. */
interface Answer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>> | undefined;
}

const SCENARIO = /^\/_scenario\/([0-9a-f-]+)$/;
const SCRIPTED = /^\/s\/([0-9a-f-]+)(\/.*)?$/;

/** Starts the upstream on 127.0.0.1, on a port the system picks. */
export async function startScriptedUpstream(): Promise<ScriptedUpstream> {
  const scenarios = new Map<string, Scenario>();
  const timers = new Set<ReturnType<typeof setTimeout>>();

  /** A control request (`/_scenario...`): what it answers. Throws on a malformed script. */
  const control = (method: string, path: string, body: unknown): Answer => {
    if (method === "POST" && path === "/_scenario") {
      const id = crypto.randomUUID();
      scenarios.set(id, {
        replies: scriptOf(body),
        served: 0,
        requests: [],
        inFlight: 0,
        maxInFlight: 0,
        open: new Set(),
      });
      return { status: 201, body: { id, prefix: `/s/${id}` } };
    }
    const id = SCENARIO.exec(path)?.[1];
    const scenario = id === undefined ? undefined : scenarios.get(id);
    if (id === undefined || scenario === undefined) return { status: 404, body: { error: "no such scenario" } };
    switch (method) {
      case "GET": {
        const record: ScenarioRecord = { requests: scenario.requests, maxInFlight: scenario.maxInFlight };
        return { status: 200, body: record };
      }
      case "PUT":
        scenario.replies = scriptOf(body);
        scenario.served = 0;
        return { status: 204 };
      case "DELETE":
        scenarios.delete(id);
        for (const open of scenario.open) open.destroy();
        return { status: 204 };
      default:
        return { status: 405, body: { error: `${method} is not a scenario method` } };
    }
  };

  const scripted = (scenario: Scenario, received: Omit<ScriptedRequest, "status">, response: ServerResponse): void => {
    const reply = scenario.replies[Math.min(scenario.served, scenario.replies.length - 1)] ?? {};
    scenario.served += 1;
    scenario.requests.push({ ...received, status: reply.hang === true ? null : (reply.status ?? 200) });
    scenario.inFlight += 1;
    scenario.maxInFlight = Math.max(scenario.maxInFlight, scenario.inFlight);
    scenario.open.add(response);
    // "close" comes after an answer and when the client gives up on a hang alike.
    response.once("close", () => {
      scenario.inFlight -= 1;
      scenario.open.delete(response);
    });
    if (reply.hang === true) return;
    const answer = () => sendJson(response, { status: reply.status ?? 200, body: reply.body, headers: reply.headers });
    if (reply.delayMs === undefined) answer();
    else {
      const timer = setTimeout(() => {
        timers.delete(timer);
        answer();
      }, reply.delayMs);
      timers.add(timer);
    }
  };

  const server = createServer((request, response) => {
    readBody(request).then(
      (body) => {
        const path = request.url ?? "/";
        const method = request.method ?? "GET";
        const match = SCRIPTED.exec(path);
        if (match === null) {
          let answer: Answer;
          try {
            answer = control(method, path, body);
          } catch (error) {
            answer = { status: 400, body: { error: String(error) } };
          }
          sendJson(response, answer);
          return;
        }
        const scenario = scenarios.get(match[1] ?? "");
        if (scenario === undefined) {
          sendJson(response, { status: 404, body: { error: "no such scenario" } });
          return;
        }
        scripted(
          scenario,
          { method, path: match[2] ?? "/", headers: headersOf(request), body, receivedAt: Date.now() },
          response,
        );
      },
      () => response.destroy(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const timer of timers) clearTimeout(timer);
        server.close(() => resolve());
        // Hanging requests and idle keep-alive sockets would hold the close forever.
        server.closeAllConnections();
      }),
  };
}

/** A script from a request body: `{ "replies": [ScriptedReply, ...] }`, at least one. */
function scriptOf(body: unknown): ScriptedReply[] {
  const replies = isRecord(body) ? body.replies : undefined;
  if (!Array.isArray(replies) || replies.length === 0) throw new Error("expected { replies: [at least one reply] }");
  return replies.map((reply: unknown, index) => {
    if (!isRecord(reply)) throw new Error(`replies[${index}] is not an object`);
    const { status, headers, body: replyBody, delayMs, hang } = reply;
    if (status !== undefined && (typeof status !== "number" || status < 200 || status > 599)) {
      throw new Error(`replies[${index}].status must be 200..599`);
    }
    if (delayMs !== undefined && (typeof delayMs !== "number" || delayMs < 0)) {
      throw new Error(`replies[${index}].delayMs must be a number of ms`);
    }
    if (headers !== undefined && !(isRecord(headers) && Object.values(headers).every((v) => typeof v === "string"))) {
      throw new Error(`replies[${index}].headers must map names to strings`);
    }
    return {
      ...(status === undefined ? {} : { status }),
      ...(headers === undefined ? {} : { headers: headers as Record<string, string> }),
      ...(replyBody === undefined ? {} : { body: replyBody }),
      ...(delayMs === undefined ? {} : { delayMs }),
      ...(hang === true ? { hang: true } : {}),
    };
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

async function readBody(request: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString("utf8");
  if (text === "") return null;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function headersOf(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  return headers;
}

function sendJson(response: ServerResponse, answer: Answer): void {
  if (response.destroyed) return;
  const { status, body, headers } = answer;
  response.writeHead(status, { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers });
  response.end(body === undefined ? "" : JSON.stringify(body));
}
