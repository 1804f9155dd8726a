// Parlor's HTTP and WebSocket protocol: requests with a tid get exactly one reply; events have no tid.
// The socket reconnects by itself (bounded backoff); the app resumes its room from `onSession(body, isReconnect)`.

export class ApiError extends Error {
  constructor(code, detail, status) {
    super(detail || code);
    this.code = code;
    this.status = status;
  }
}

/** fetch() a JSON route; errors become ApiError with the server's {code, detail}. */
export async function api(method, path, { token, body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new ApiError('network', 'The server cannot be reached.', 0);
  }
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    throw new ApiError(data?.code || `http:${response.status}`, data?.detail || response.statusText, response.status);
  }
  return data;
}

const BACKOFF_MS = [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000];  // then give up: "offline"
// Closes after which reconnecting on our own cannot help: the server was reset (4004), or another connection resumed
// this session (4005) — resuming it here would take it back, and two such clients would trade it forever.
const FINAL_CLOSES = new Map([
  [4004, 'The server was reset.'],
  [4005, 'This session continued in another window or device.'],
]);
const REQUEST_TIMEOUT_MS = 10000;
const PING_EVERY_MS = 20000;

/**
 * One logical connection to /ws. States: connecting → connected ⇄ reconnecting → offline.
 * Callbacks: onState(state), onEvent(message), onSession(sessionBody, isReconnect).
 */
export class Connection {
  constructor(token, { onState, onEvent, onSession }) {
    this.token = token;
    this.onState = onState;
    this.onEvent = onEvent;
    this.onSession = onSession;
    this.state = 'offline';
    this.socket = null;
    this.pending = new Map();  // tid → {resolve, reject, timer}
    this.nextTid = 1;
    this.attempt = 0;
    this.everConnected = false;
    this.closedByUs = false;
    this.retryTimer = null;
    this.pingTimer = null;
    this.endReason = null;  // why the server ended the session (FINAL_CLOSES), until the next open()
  }

  get url() {
    const scheme = location.protocol === 'https:' ? 'wss:' : 'ws:';
    return `${scheme}//${location.host}/ws?token=${encodeURIComponent(this.token)}`;
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.onState(state);
  }

  open() {
    clearTimeout(this.retryTimer);
    this.closedByUs = false;
    this.endReason = null;
    if (this.socket) {  // a retry while a socket is still opening: forget that one
      const old = this.socket;
      this.socket = null;
      old.onmessage = old.onclose = null;
      old.close();
    }
    this.setState(this.everConnected ? 'reconnecting' : 'connecting');
    const socket = new WebSocket(this.url);
    this.socket = socket;
    socket.onmessage = (message) => this.receive(message.data);
    socket.onclose = (event) => { if (this.socket === socket) this.lost(event.code); };
  }

  /** Reconnect now, e.g. from an "offline" Retry button or when the browser comes back online. */
  retry() {
    if (this.state !== 'offline' && this.state !== 'reconnecting') return;
    this.attempt = 0;
    this.open();
  }

  close() {
    this.closedByUs = true;
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    const socket = this.socket;
    this.socket = null;
    socket?.close(1000);
    this.failPending(new ApiError('connection:closed', 'The connection was closed.'));
    this.setState('offline');
  }

  lost(code) {
    this.socket = null;
    clearInterval(this.pingTimer);
    this.failPending(new ApiError('connection:lost', 'The connection to the server was lost.'));
    if (this.closedByUs) return;
    if (FINAL_CLOSES.has(code)) {
      this.endReason = FINAL_CLOSES.get(code);
      this.setState('offline');
      return;
    }
    if (this.attempt >= BACKOFF_MS.length) {
      this.setState('offline');
      return;
    }
    const delay = BACKOFF_MS[this.attempt++] * (0.8 + Math.random() * 0.4);
    this.setState(this.everConnected ? 'reconnecting' : 'connecting');
    this.retryTimer = setTimeout(() => this.open(), delay);
  }

  failPending(error) {
    for (const { reject, timer } of this.pending.values()) {
      clearTimeout(timer);
      reject(error);
    }
    this.pending.clear();
  }

  receive(text) {
    let message;
    try { message = JSON.parse(text); } catch { return; }
    if (message.type === 'session:success' && message.tid == null) {
      const isReconnect = this.everConnected;
      this.everConnected = true;
      this.attempt = 0;
      this.startPinging();
      this.setState('connected');
      this.onSession(message.body, isReconnect);
      return;
    }
    const waiter = message.tid != null ? this.pending.get(message.tid) : undefined;
    if (waiter) {
      this.pending.delete(message.tid);
      clearTimeout(waiter.timer);
      if (message.type === 'error') waiter.reject(new ApiError(message.body?.code, message.body?.detail));
      else waiter.resolve(message.body || {});
      return;
    }
    if (message.type === 'error') {
      console.warn('parlor: server error', message.body);
      return;
    }
    this.onEvent(message);
  }

  /** Sends a request and resolves with its success body, or rejects with an ApiError. */
  request(type, body = {}) {
    return new Promise((resolve, reject) => {
      if (!this.socket || this.socket.readyState !== WebSocket.OPEN || this.state !== 'connected') {
        reject(new ApiError('connection:not-connected', 'Not connected to the server.'));
        return;
      }
      const tid = String(this.nextTid++);
      const timer = setTimeout(() => {
        this.pending.delete(tid);
        reject(new ApiError('request:timeout', `${type} got no reply.`));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(tid, { resolve, reject, timer });
      this.socket.send(JSON.stringify({ type, tid, body }));
    });
  }

  /** A ping that goes unanswered means a dead socket the browser has not noticed: drop it and reconnect. */
  startPinging() {
    clearInterval(this.pingTimer);
    this.pingTimer = setInterval(() => {
      this.request('session:ping').catch((error) => {
        if (error.code === 'request:timeout') this.socket?.close(4000, 'ping timeout');
      });
    }, PING_EVERY_MS);
  }
}
