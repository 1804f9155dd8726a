// Parlor's JavaScript client: one ES module, no dependencies, for browsers and Node ≥ 18 (docs/clients.md).
// HTTP for sign-in and rooms; one WebSocket per Session, replies matched to requests by tid, events to listeners,
// reconnect with bounded backoff and session:resume after a drop; test helpers (expect, fault hooks) on top.
// The web client uses this file as its protocol layer; the server serves it at /sdk/parlor.js. What only Node can do
// (start the server binary, audio members, ffmpeg tones) is in node.js beside it, which imports this file.

// Node 20 has no global WebSocket: Debian's node-ws (NODE_PATH=/usr/share/nodejs) or npm's ws, through require,
// which honours NODE_PATH where ESM resolution does not. Browsers never take this path.
const WebSocketClass = globalThis.WebSocket ?? await (async () => {
  try { return (await import('node:module')).createRequire(import.meta.url)('ws'); } catch { return null; }
})();

/** Every failure: the server's `code`/`detail` (docs/protocol.md "Error codes") or a `client:error:*` of ours. */
export class ParlorError extends Error {
  constructor(code, detail, { status, requestType } = {}) {
    super(detail || code);
    this.name = 'ParlorError';
    this.code = code;
    this.detail = detail;
    this.status = status;
    this.requestType = requestType;
  }
}

/** An expect()/expectNone() that failed; `received` is every event the session had. */
export class ExpectationError extends Error {
  constructor(message, received) { super(message); this.name = 'ExpectationError'; this.received = received; }
}

export const DEV_ADMIN_TOKEN = 'parlor-dev-admin-token';
const OPEN = 1;
// Closes after which reconnecting cannot help: resuming after 4005 would take the session back from its new holder.
const FINAL_CLOSES = {
  4003: ['auth:error:invalid-token', "The user's tokens were revoked."],
  4004: ['session:error:server-reset', 'The server was reset.'],
  4005: ['session:error:taken-over', 'This session continued in another window or device.'],
};
const SESSION_DEFAULTS = {
  backoffMs: [500, 1000, 2000, 4000, 8000, 8000, 8000, 8000],  // then give up: 'offline'
  requestTimeoutMs: 10000,
  pingIntervalMs: 20000,   // an unanswered ping means a dead socket the runtime has not noticed
  renewToken: null,        // async () => jwt, asked after close 4001 (token expired)
  maxRecorded: 10000,      // events kept for expect()
};

const nameKey = (name) => String(name).trim().normalize('NFC');
const snake = (options) => Object.fromEntries(Object.entries(options)
  .filter(([, value]) => value !== undefined)
  .map(([key, value]) => [key.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), value]));

/** A server: HTTP routes, claims kept per name, sessions. */
export class Parlor {
  constructor(url = globalThis.location?.origin, { token = null, adminToken = null, claims = new Map(), session = {} } = {}) {
    let parsed;
    try { parsed = new URL(url); } catch { parsed = null; }
    if (!parsed || !/^https?:$/.test(parsed.protocol)) {
      throw new ParlorError('client:error:invalid-url', `not an http:// or https:// URL: ${url}`);
    }
    this.url = String(url).replace(/\/+$/, '');
    this.token = token;
    this.adminToken = adminToken;
    this.claims = claims;            // name → claim; anything with get/set (the web client: localStorage)
    this.sessionDefaults = session;  // options for every connect()
    this.sessions = new Set();
  }

  /** fetch() a JSON route; an error becomes ParlorError with the server's code and detail. */
  async http(method, path, { token = this.token, body } = {}) {
    const headers = { Accept: 'application/json' };
    if (token) headers.Authorization = `Bearer ${token}`;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let response;
    try {
      response = await fetch(this.url + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      throw new ParlorError('client:error:connection-failed', `The server cannot be reached (${error.cause?.code || error.message}).`, { status: 0 });
    }
    const text = await response.text();
    let data = null;
    try { data = text ? JSON.parse(text) : null; } catch { /* not JSON: the status says it */ }
    if (!response.ok) {
      throw new ParlorError(data?.code || `http:error:${response.status}`, data?.detail || response.statusText, { status: response.status });
    }
    return data;
  }

  /** POST /auth with the claim this name got last time, so the same identity comes back (protocol.md). */
  async auth(name, { code, claim = this.claims.get(nameKey(name)) } = {}) {
    const reply = await this.http('POST', '/auth', { token: null, body: { name, ...(code ? { code } : {}), ...(claim ? { claim } : {}) } });
    if (reply?.claim) this.claims.set(reply.name, reply.claim);
    return reply;
  }

  rooms({ token } = {}) { return this.http('GET', '/rooms', { token: token ?? this.token }); }
  room(id, { token } = {}) { return this.http('GET', `/rooms/${encodeURIComponent(id)}`, { token: token ?? this.token }); }
  /** POST /rooms; `properties`: { mode: 'stage', e2ee, ttl, max_members }. A stage room needs a token. */
  createRoom(displayName, { name, properties, token } = {}) {
    const body = { display_name: displayName, ...(name ? { name } : {}), ...(properties ? { properties } : {}) };
    return this.http('POST', '/rooms', { token: token ?? this.token, body });
  }

  /** Opens a session on a token and waits for session:success; a first connection that fails rejects. */
  async connect(token = this.token, options = {}) {
    const session = new Session(this, token, { ...this.sessionDefaults, ...options });
    await session.connect();
    return session;
  }

  /** auth(name) then connect(): the token is renewed with the kept claim when it expires. */
  async session(name, options = {}) {
    const { jwt } = await this.auth(name);
    return this.connect(jwt, { renewToken: async () => (await this.auth(name)).jwt, ...options });
  }

  // Test mode (parlor serve --dev or --test-mode): the admin routes a test drives the server side with.
  dropMember(roomId, memberId) { return this.admin('POST', `/rooms/${encodeURIComponent(roomId)}/members/${encodeURIComponent(memberId)}/drop`); }
  kickMember(roomId, memberId) { return this.admin('POST', `/rooms/${encodeURIComponent(roomId)}/members/${encodeURIComponent(memberId)}/kick`); }
  reset() { return this.admin('POST', '/admin/reset'); }
  admin(method, path, body) { return this.http(method, path, { token: this.adminToken, body }); }

  /** Closes every session connect() made (between tests). */
  async closeSessions() { await Promise.all([...this.sessions].map((session) => session.close())); }
}

/**
 * One logical connection to /ws. state: connecting → connected ⇄ reconnecting → offline (gave up, or the server
 * ended the session: `endError`; retry() starts again) or closed (close()). Listeners: on('event'|'state'|
 * 'session'|'resumed'|'error', fn) → unsubscribe.
 */
export class Session {
  constructor(server, token, options = {}) {
    this.server = server;
    this.token = token;
    this.options = { ...SESSION_DEFAULTS, ...options };
    this.state = 'offline';
    this.socket = null;
    this.pending = new Map();   // tid → { resolve, reject, timer, type, body }
    this.nextTid = 1;
    this.attempt = 0;
    this.everConnected = false;
    this.info = null;           // the last session:success body
    this.sessionId = null;
    this.iceServers = [];
    this.rooms = new Map();     // cid → { memberId, lastEventId }: joined rooms, resumed after a drop
    this.endError = null;
    this.received = [];         // every event, for expect() and its failure report
    this.cursor = 0;            // expect() looks after its previous match
    this.resumes = [];          // every resume's result, with the drop count it followed
    this.drops = 0;
    this.held = false;
    this.listeners = { event: new Set(), state: new Set(), session: new Set(), resumed: new Set(), error: new Set() };
    this.watchers = new Set();  // waits of expect()/expectState(), run on every change
  }

  on(kind, listener) {
    this.listeners[kind].add(listener);
    return () => this.listeners[kind].delete(listener);
  }

  emit(kind, ...args) {
    for (const listener of this.listeners[kind]) {
      try { listener(...args); } catch (error) { console.error('parlor: a listener threw', error); }
    }
    for (const watcher of [...this.watchers]) watcher();
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.emit('state', state);
  }

  get url() {
    return `${this.server.url.replace(/^http/, 'ws')}/ws?token=${encodeURIComponent(this.token)}`;
  }

  /** The first connection: resolves on session:success, rejects with client:error:connection-failed. */
  connect() {
    return new Promise((resolve, reject) => {
      this.opening = { resolve, reject };
      this.open();
    });
  }

  open() {
    clearTimeout(this.retryTimer);
    if (this.state === 'closed') return;
    if (!WebSocketClass) {
      this.fail(new ParlorError('client:error:connection-failed', 'No WebSocket in this runtime: install ws (Debian: node-ws, NODE_PATH=/usr/share/nodejs).'));
      return;
    }
    this.server.sessions.add(this);
    if (this.socket) {  // a retry while a socket is still opening: forget that one
      const old = this.socket;
      this.socket = null;
      old.onmessage = old.onclose = null;
      old.close();
    }
    this.setState(this.everConnected ? 'reconnecting' : 'connecting');
    const socket = new WebSocketClass(this.url);
    this.socket = socket;
    socket.onmessage = (message) => { if (this.socket === socket) this.receive(message.data); };
    socket.onclose = (event) => { if (this.socket === socket) this.lost(socket.droppedByUs ? 4000 : event.code); };
    socket.onerror = () => {};  // the close that follows says it
  }

  /** Reconnect now, e.g. from an "offline" Retry button, or after pauseReconnects(). */
  retry() {
    if (this.state !== 'offline' && this.state !== 'reconnecting' && this.state !== 'connecting') return;
    this.attempt = 0;
    this.endError = null;
    this.open();
  }

  /** Ends the session for good; resolves once the socket is closed. Leave rooms first to leave at once. */
  close() {
    clearTimeout(this.retryTimer);
    clearInterval(this.pingTimer);
    this.server.sessions.delete(this);
    const socket = this.socket;
    this.socket = null;
    const closed = new ParlorError('client:error:closed', 'The session was closed.');
    this.failPending(closed);
    if (this.opening) { this.opening.reject(closed); this.opening = null; }
    this.setState('closed');
    if (!socket || socket.readyState > OPEN) return Promise.resolve();
    return new Promise((resolve) => {
      const deadline = setTimeout(() => { socket.terminate?.(); resolve(); }, 1000);
      socket.onclose = () => { clearTimeout(deadline); resolve(); };
      socket.close(1000);
    });
  }

  fail(error) {
    this.endError = error;
    this.setState('offline');
    if (this.opening) { this.opening.reject(error); this.opening = null; }
  }

  lost(code) {
    this.lastCloseCode = code;  // 4000: dropped by us (a ping unanswered, a simulated drop)
    this.socket = null;
    clearInterval(this.pingTimer);
    this.failPending(new ParlorError('client:error:connection-lost', 'The connection to the server was lost.'));
    if (this.state === 'closed') return;
    this.drops += 1;
    if (this.opening) {
      this.fail(new ParlorError('client:error:connection-failed', `No session from ${this.server.url} (close ${code}).`));
      return;
    }
    if (FINAL_CLOSES[code]) {
      this.fail(new ParlorError(...FINAL_CLOSES[code]));
      return;
    }
    if (code === 4001 && this.options.renewToken) {  // the token expired: a new one, then resume as usual
      this.setState('reconnecting');
      Promise.resolve().then(this.options.renewToken).then((jwt) => { this.token = jwt; }, () => {})
        .then(() => this.scheduleReconnect());
      return;
    }
    this.scheduleReconnect();
  }

  scheduleReconnect() {
    const backoff = this.options.backoffMs;
    if (this.state === 'closed') return;
    if (this.attempt >= backoff.length) {
      this.fail(new ParlorError('client:error:reconnect-failed', `No connection after ${backoff.length} attempts.`));
      return;
    }
    this.setState(this.everConnected ? 'reconnecting' : 'connecting');
    if (this.held) { this.waitingToReconnect = true; return; }
    const delay = backoff[this.attempt++] * (0.8 + Math.random() * 0.4);
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
    if (message.type === 'session:success' && message.tid == null) { this.started(message.body || {}); return; }
    const waiter = message.tid != null ? this.pending.get(String(message.tid)) : undefined;
    if (waiter) {
      this.pending.delete(String(message.tid));
      clearTimeout(waiter.timer);
      const body = message.body || {};
      if (message.type === 'error') waiter.reject(new ParlorError(body.code, body.detail, { requestType: body.request_type ?? waiter.type }));
      else { this.track(waiter.type, waiter.body, body); waiter.resolve(body); }
      return;
    }
    if (message.type === 'error') { this.emit('error', new ParlorError(message.body?.code, message.body?.detail)); return; }
    if (message.tid != null) return;  // the reply to a request that timed out: not an event
    this.note(message);
    this.received.push(message);
    if (this.received.length > this.options.maxRecorded) {
      const dropped = this.received.length - this.options.maxRecorded;
      this.received.splice(0, dropped);
      this.cursor = Math.max(0, this.cursor - dropped);
    }
    this.emit('event', message);
  }

  /** What resume needs: the joined rooms, from replies (raw requests too) and events. */
  track(type, body, reply) {
    if (type === 'conversation:join') {
      const cid = reply.cid ?? body.cid;
      const before = this.rooms.get(cid)?.lastEventId ?? 0;
      this.rooms.set(cid, { memberId: reply.member_id, lastEventId: Math.max(before, reply.last_event_id ?? 0) });
    } else if (type === 'conversation:leave') {
      this.rooms.delete(body.cid);
    }
  }

  note(event) {
    const room = this.rooms.get(event.cid);
    if (!room) return;
    // A summary-mode stage room's room:audience covers every event up to its last_event_id (protocol.md).
    const id = typeof event.id === 'number' ? event.id : event.type === 'room:audience' ? event.body?.last_event_id : undefined;
    if (typeof id === 'number' && id > room.lastEventId) room.lastEventId = id;
    if (event.type === 'member:left' && (event.body?.member_id ?? event.from) === room.memberId) this.rooms.delete(event.cid);
  }

  /** session:success: the first one connects; a later one resumes the joined rooms from the last ids seen. */
  started(body) {
    const isReconnect = this.everConnected;
    const previous = this.sessionId;
    this.everConnected = true;
    this.attempt = 0;
    this.info = body;
    this.iceServers = body.ice_servers || [];
    this.startPinging();
    this.emit('session', body, isReconnect);
    if (!isReconnect || !previous || this.rooms.size === 0) {
      this.sessionId = body.session_id;
      if (isReconnect) this.resumed({ resumed: [], lost: [], lostReasons: {} });
      else this.setState('connected');
      if (this.opening) { this.opening.resolve(this); this.opening = null; }
      return;
    }
    const socket = this.socket;
    const last_event_ids = Object.fromEntries([...this.rooms].map(([cid, room]) => [cid, room.lastEventId]));
    this.send('session:resume', { session_id: previous, last_event_ids }, this.options.requestTimeoutMs).then((reply) => {
      this.sessionId = reply.session_id || body.session_id;
      if (reply.ice_servers) this.iceServers = reply.ice_servers;
      const resumed = (reply.resumed || []).map((entry) => entry.cid);
      const lost = [...this.rooms.keys()].filter((cid) => !resumed.includes(cid));
      for (const cid of lost) this.rooms.delete(cid);
      const lostReasons = Object.fromEntries(lost.map((cid) => [cid, reply.lost_reasons?.[cid] ?? 'membership-ended']));
      this.resumed({ resumed, lost, lostReasons, reply });
    }, (error) => {
      if (this.socket !== socket) return;  // dropped again: the next connection resumes
      if (error.code?.startsWith('client:error:')) { this.dropSocket(); return; }
      // session:error:not-found and the like: the memberships are gone; join again.
      this.sessionId = body.session_id;
      const lost = [...this.rooms.keys()];
      this.rooms.clear();
      this.resumed({ resumed: [], lost, lostReasons: Object.fromEntries(lost.map((cid) => [cid, error.code])), error });
    });
  }

  resumed(result) {
    this.resumes.push({ ...result, afterDrop: this.drops });
    this.setState('connected');
    this.emit('resumed', result);
  }

  startPinging() {
    clearInterval(this.pingTimer);
    if (!this.options.pingIntervalMs) return;
    this.pingTimer = setInterval(() => {
      this.send('session:ping', {}, this.options.requestTimeoutMs).catch((error) => {
        if (error.code === 'client:error:timeout') this.dropSocket();
      });
    }, this.options.pingIntervalMs);
  }

  /** A request of any type; resolves with its success body, rejects with ParlorError (the server's code). */
  request(type, body = {}, { timeoutMs = this.options.requestTimeoutMs } = {}) {
    if (this.state !== 'connected') {
      return Promise.reject(new ParlorError('client:error:not-connected', `Not connected to the server (${this.state}).`, { requestType: type }));
    }
    return this.send(type, body, timeoutMs);
  }

  send(type, body, timeoutMs) {
    return new Promise((resolve, reject) => {
      const socket = this.socket;
      if (!socket || socket.readyState !== OPEN) {
        reject(new ParlorError('client:error:not-connected', 'Not connected to the server.', { requestType: type }));
        return;
      }
      const tid = String(this.nextTid++);
      const timer = setTimeout(() => {
        this.pending.delete(tid);
        reject(new ParlorError('client:error:timeout', `${type} got no reply within ${timeoutMs} ms.`, { requestType: type }));
      }, timeoutMs);
      this.pending.set(tid, { resolve, reject, timer, type, body });
      socket.send(JSON.stringify({ type, tid, body }));
    });
  }

  // Every request type of docs/protocol.md.
  ping() { return this.request('session:ping'); }
  join(cid, { e2ee = false } = {}) { return this.request('conversation:join', e2ee ? { cid, e2ee: true } : { cid }); }
  leave(cid) { return this.request('conversation:leave', { cid }); }
  /** options: pageSize, cursor, order, state, role, hands. */
  members(cid, options = {}) { return this.request('conversation:members', { cid, ...snake(options) }); }
  /** options: since, pageSize. */
  events(cid, options = {}) { return this.request('conversation:events', { cid, ...snake(options) }); }
  watch(cid) { return this.request('conversation:watch', { cid }); }
  unwatch(cid) { return this.request('conversation:unwatch', { cid }); }
  enableAudio(cid) { return this.request('audio:enable', { cid }); }
  disableAudio(cid) { return this.request('audio:disable', { cid }); }
  mute(cid) { return this.request('audio:mute:on', { cid }); }
  unmute(cid) { return this.request('audio:mute:off', { cid }); }
  setSpeaking(cid, speaking) { return this.request(speaking ? 'audio:speaking:on' : 'audio:speaking:off', { cid }); }
  sendOffer(cid, to, sdp) { return this.request('rtc:offer', { cid, to, sdp }); }
  sendAnswer(cid, to, sdp) { return this.request('rtc:answer', { cid, to, sdp }); }
  sendIce(cid, to, candidate) { return this.request('rtc:ice', { cid, to, candidate }); }
  mediaOffer(cid, sdp, { e2ee = false } = {}) { return this.request('media:offer', e2ee ? { cid, sdp, e2ee: true } : { cid, sdp }); }
  mediaClose(cid) { return this.request('media:close', { cid }); }
  raiseHand(cid) { return this.request('member:hand:raise', { cid }); }
  lowerHand(cid, memberId) { return this.request('member:hand:lower', memberId ? { cid, member_id: memberId } : { cid }); }
  setRole(cid, memberId, role) { return this.request('member:role', { cid, member_id: memberId, role }); }
  ban(cid, userId, seconds) { return this.request('member:ban', { cid, user_id: userId, seconds }); }
  muteAll(cid) { return this.request('room:mute-all', { cid }); }
  lock(cid) { return this.request('room:lock', { cid }); }
  unlock(cid) { return this.request('room:unlock', { cid }); }
  sendMessage(cid, text) { return this.request('message:send', { cid, text }); }
  sendCiphertext(cid, ciphertext) { return this.request('message:send', { cid, ciphertext }); }
  react(cid, emoji) { return this.request('reaction:send', { cid, emoji }); }
  startRecording(cid) { return this.request('room:record:start', { cid }); }
  stopRecording(cid, recordingId) { return this.request('room:record:stop', recordingId ? { cid, recording_id: recordingId } : { cid }); }
  sendKey(cid, body) { return this.request('e2ee:key', { ...body, cid }); }
  setStreamPublic(cid, isPublic) { return this.request('room:stream:public', { cid, public: isPublic }); }

  // Fault hooks for tests.
  /** Cuts the socket as a network failure would (Node: no close frame); the session reconnects and resumes. */
  simulateNetworkDrop() { this.dropSocket(); }
  dropSocket() {
    const socket = this.socket;
    if (!socket) return;
    socket.droppedByUs = true;
    if (socket.terminate) socket.terminate(); else socket.close(4000, 'dropped');
  }
  /** Holds reconnect attempts (the server's grace period can run out) until resumeReconnects(). */
  pauseReconnects() { this.held = true; }
  resumeReconnects() {
    this.held = false;
    if (this.waitingToReconnect) { this.waitingToReconnect = false; this.open(); }
  }

  // Expectations for tests: every wait has a deadline and its failure lists every event received.
  /** The first event matching after the previous match; rejects with ExpectationError after `timeout` ms. */
  expect(spec, { timeout = 5000 } = {}) {
    const match = matcher(spec);
    return this.waitUntil(timeout, () => {
      const index = this.received.findIndex((event, i) => i >= this.cursor && match.test(event));
      if (index < 0) return undefined;
      this.cursor = index + 1;
      return this.received[index];
    }, () => this.failure(`expected ${match.description} within ${timeout} ms`));
  }

  /** Resolves after `timeout` ms if no event after the previous match matches; rejects at the first that does. */
  expectNone(spec, { timeout = 1000 } = {}) {
    const match = matcher(spec);
    const from = this.cursor;
    return new Promise((resolve, reject) => {
      const check = () => {
        const event = this.received.find((e, i) => i >= from && match.test(e));
        if (event) { done(); reject(this.failure(`expected no ${match.description} within ${timeout} ms, got #${event.id ?? '-'} ${event.type}`)); }
      };
      const timer = setTimeout(() => { done(); resolve(); }, timeout);
      const done = () => { clearTimeout(timer); this.watchers.delete(check); };
      this.watchers.add(check);
      check();
    });
  }

  /** Expect from now on: events received so far are not matched. */
  skipToNow() { this.cursor = this.received.length; }

  /** Waits until `state` is the session's state (the current one counts). */
  expectState(state, { timeout = 5000 } = {}) {
    return this.waitUntil(timeout, () => (this.state === state ? state : undefined),
      () => this.failure(`expected state ${state} within ${timeout} ms`));
  }

  /** The result of the resume after the latest drop: { resumed, lost, lostReasons }. */
  expectResumed({ timeout = 10000 } = {}) {
    const drops = this.drops;
    return this.waitUntil(timeout, () => this.resumes.find((r) => r.afterDrop >= drops),
      () => this.failure(`expected a resume within ${timeout} ms`));
  }

  waitUntil(timeout, check, failure) {
    return new Promise((resolve, reject) => {
      const watcher = () => {
        const result = check();
        if (result !== undefined) { done(); resolve(result); }
      };
      const timer = setTimeout(() => { done(); reject(failure()); }, timeout);
      const done = () => { clearTimeout(timer); this.watchers.delete(watcher); };
      this.watchers.add(watcher);
      watcher();
    });
  }

  failure(what) {
    const lines = this.received.map((e, i) => `${i < this.cursor ? ' ' : '>'} #${e.id ?? '-'} ${e.type} ${e.cid ?? ''} ${JSON.stringify(e.body ?? {}).slice(0, 200)}`);
    return new ExpectationError(`${what}; state ${this.state}; ${lines.length} events received by ${this.info?.user?.name ?? 'this session'} `
      + `(> not yet matched):\n${lines.join('\n') || '  (none)'}`, [...this.received]);
  }
}

/**
 * An event matcher: a function, a type ('member:joined'), or an object whose keys must all hold:
 * type, room (cid), name (body.user.name), member (member id), reason, and any other key compared with body[key].
 */
export function matcher(spec) {
  if (typeof spec === 'function') return { test: spec, description: spec.description || 'an event matching the function' };
  const fields = typeof spec === 'string' ? { type: spec } : spec;
  const { type, room, name, member, ...body } = fields;
  return {
    description: JSON.stringify(fields),
    test: (event) => (type === undefined || event.type === type) && (room === undefined || event.cid === room)
      && (name === undefined || event.body?.user?.name === name)
      && (member === undefined || (event.body?.member_id ?? event.from) === member)
      && Object.entries(body).every(([key, value]) => event.body?.[key] === value),
  };
}
