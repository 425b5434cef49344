// The paced sender's HTTP/1.1 client: plain keep-alive sockets, a request written as one
// pre-built buffer, and just enough response parsing for the bench (status line,
// Content-Length or chunked, the body as text). It exists because the load generator shares
// a 2-core machine with the service and the receiver: undici's Pool.request spent about
// 45 µs of CPU per message here, which the service then did not have; this spends a
// fraction of that. One request in flight per connection (no pipelining), like the clients
// the service meets in production; requests beyond the free connections wait in a FIFO.
import { connect } from "node:net";

const HEADER_END = "\r\n\r\n";
const CONTENT_LENGTH = /\r\ncontent-length:[ \t]*(\d+)/i;
const CHUNKED = /\r\ntransfer-encoding:[ \t]*chunked/i;
const CONNECTION_CLOSE = /\r\nconnection:[ \t]*close/i;
const LAST_CHUNK = "\r\n0\r\n\r\n";
// The service closes a keep-alive connection idle for 5 s (`keepAliveTimeoutMs`): a request
// written as that close arrives is lost, so a connection idle for longer than this is ended
// here instead of reused, as HTTP clients do (undici's keep-alive timeout is shorter than the
// server's for the same reason).
const MAX_IDLE_MS = 4_000;

/**
 * Builds the bytes of one POST once, so that each send is a single socket write.
 * `headers` is a plain object; Host and Content-Length are added.
 */
export function buildRequest(url, headers, body) {
  const { host, pathname, search } = new URL(url);
  const payload = Buffer.from(body, "utf8");
  let head = `POST ${pathname}${search} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  head += `content-length: ${payload.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, "latin1"), payload]);
}

/**
 * A set of up to `connections` keep-alive connections to `url`'s origin.
 * `send(request, done)` writes a buffer from buildRequest and calls
 * `done(error, status, bodyText)` once the answer is complete or the connection failed.
 */
export function createRawClient(url, connections = 64) {
  const { hostname, port } = new URL(url);
  const idle = [];
  const waiting = [];
  let waitingHead = 0;
  let open = 0;
  let closed = false;

  const next = () => {
    if (waitingHead === waiting.length) return undefined;
    const job = waiting[waitingHead];
    waiting[waitingHead] = undefined;
    waitingHead += 1;
    // Compact now and then, so the FIFO does not grow for the whole run.
    if (waitingHead > 1024 && waitingHead * 2 > waiting.length) {
      waiting.splice(0, waitingHead);
      waitingHead = 0;
    }
    return job;
  };

  const openConnection = () => {
    open += 1;
    const socket = connect({ host: hostname, port: Number(port), noDelay: true });
    socket.setEncoding("latin1");
    const connection = { socket, current: null, text: "", alive: true, idleSince: 0 };

    const finish = (error, status, body) => {
      const job = connection.current;
      connection.current = null;
      connection.text = "";
      if (job !== null) job.done(error, status, body);
    };
    const release = () => {
      if (closed) {
        socket.end();
        return;
      }
      const job = next();
      if (job === undefined) {
        connection.idleSince = performance.now();
        idle.push(connection);
      } else dispatch(connection, job);
    };

    socket.on("data", (chunk) => {
      connection.text += chunk;
      const text = connection.text;
      const headerEnd = text.indexOf(HEADER_END);
      if (headerEnd === -1) return;
      const head = text.slice(0, headerEnd);
      const bodyStart = headerEnd + HEADER_END.length;
      let body;
      const length = CONTENT_LENGTH.exec(head);
      if (length !== null) {
        const end = bodyStart + Number(length[1]);
        if (text.length < end) return;
        body = text.slice(bodyStart, end);
      } else if (CHUNKED.test(head)) {
        // Only the message_id is read from bodies, so the chunk framing can stay in the text.
        const end = text.indexOf(LAST_CHUNK, bodyStart - 2);
        if (end === -1) return;
        body = text.slice(bodyStart, end);
      } else {
        body = text.slice(bodyStart);
      }
      const status = Number(text.slice(9, 12));
      finish(null, status, body);
      if (CONNECTION_CLOSE.test(head)) socket.end();
      else release();
    });
    const lost = (error) => {
      if (!connection.alive) return;
      connection.alive = false;
      open -= 1;
      const at = idle.indexOf(connection);
      if (at !== -1) idle.splice(at, 1);
      finish(error ?? new Error("connection closed"), 0, "");
      // Work that was waiting for this connection gets a new one.
      if (!closed && waitingHead < waiting.length) {
        const job = next();
        if (job !== undefined) dispatch(openConnection(), job);
      }
    };
    socket.on("error", lost);
    socket.on("close", () => lost(null));
    return connection;
  };

  const dispatch = (connection, job) => {
    connection.current = job;
    connection.socket.write(job.request);
  };

  return {
    send(request, done) {
      const job = { request, done };
      let connection = idle.pop();
      // Its close then finds no request on it.
      while (connection !== undefined && performance.now() - connection.idleSince > MAX_IDLE_MS) {
        connection.socket.end();
        connection = idle.pop();
      }
      if (connection !== undefined) dispatch(connection, job);
      else if (open < connections) dispatch(openConnection(), job);
      else waiting.push(job);
    },
    /** Ends idle connections now and busy ones after their answer; fails what still waits. */
    async close() {
      closed = true;
      for (const connection of idle) connection.socket.end();
      idle.length = 0;
      for (let job = next(); job !== undefined; job = next()) job.done(new Error("client closed"), 0, "");
    },
  };
}
