#!/usr/bin/env node
// bench/node-peer/server.js: the Node `ws` peer of bench/run (issue 37). A rooms server on Debian's node-ws that
// speaks Parlor's protocol for what parlor-bench uses: POST /auth (an HS256 token), POST /rooms, GET /ws with the
// token, session:success, conversation:join (the member list and last_event_id), conversation:leave,
// member:joined / member:left fanned out with gap-free per-room ids, session:ping, and Parlor's heartbeat and grace
// period. Membership and fan-out live in memory: it stores nothing, where Parlor commits every join and leave to
// SQLite before it answers. Each event is encoded once per fan-out and the same bytes go to every member, as Parlor
// does; each member's record is encoded once at its join and spliced into join replies, as Parlor's are.
//
//   NODE_PATH=/usr/share/nodejs node bench/node-peer/server.js [--host 127.0.0.1] [--port 0]
//       [--ping-interval 5] [--pong-timeout 15] [--grace-period 20] [--max-message-bytes 65536]
//
// It prints "listening on http://HOST:PORT" when ready and exits on SIGTERM or SIGINT.
'use strict';
const crypto = require('crypto');
const http = require('http');
const { WebSocketServer } = require('ws');

const options = parseOptions(process.argv.slice(2));
const LIMITS = { users: 200000, rooms: 100000, membersPerRoom: 1000, bodyBytes: 32768, nameChars: 64, displayNameChars: 100 };
const SECRET = crypto.randomBytes(32);
const JWT_HEADER = Buffer.from('{"alg":"HS256","typ":"JWT"}').toString('base64url');
const TOKEN_SECONDS = 6 * 3600;

const usersByName = new Map();  // name -> {id, name}
const usersByID = new Map();    // id -> user
const rooms = new Map();        // id -> Room
const sessions = new Set();     // every open Session, for the heartbeat

function parseOptions(args) {
    const result = { host: '127.0.0.1', port: 0, pingInterval: 5, pongTimeout: 15, gracePeriod: 20, maxMessageBytes: 65536 };
    const names = { '--host': 'host', '--port': 'port', '--ping-interval': 'pingInterval', '--pong-timeout': 'pongTimeout',
                    '--grace-period': 'gracePeriod', '--max-message-bytes': 'maxMessageBytes' };
    for (let index = 0; index < args.length; index += 2) {
        const key = names[args[index]];
        if (!key || index + 1 >= args.length) fail(`usage: server.js ${Object.keys(names).map((n) => `[${n} VALUE]`).join(' ')}`);
        if (key === 'host') { result.host = args[index + 1]; continue; }
        const value = Number(args[index + 1]);
        if (!Number.isFinite(value) || value < 0 || (key === 'port' && (!Number.isInteger(value) || value > 65535))) {
            fail(`${args[index]} takes a number >= 0 (got ${args[index + 1]})`);
        }
        result[key] = value;
    }
    // Benchmarks here stay on this machine: loopback addresses only.
    if (!/^127\.\d+\.\d+\.\d+$/.test(result.host)) fail('--host must be a loopback address (127.x.x.x)');
    if (result.maxMessageBytes < 1024) fail('--max-message-bytes is at least 1024');
    return result;
}

function fail(message) {
    process.stderr.write(`node-peer: ${message}\n`);
    process.exit(2);
}

const hex = (bytes) => crypto.randomBytes(bytes).toString('hex');
const isoNow = () => new Date().toISOString();

// --- tokens: HS256 JWTs, signed and checked with node's crypto (HMAC-SHA256) -----------------------------------------

function signToken(user) {
    const now = Math.floor(Date.now() / 1000);
    const payload = { exp: now + TOKEN_SECONDS, iat: now, jti: `TOK-${hex(16)}`, nbf: now, sub: user.name, uid: user.id };
    const unsigned = `${JWT_HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
    return `${unsigned}.${crypto.createHmac('sha256', SECRET).update(unsigned).digest('base64url')}`;
}

/// The user a token names, or null when it is not one of this server's, or has expired.
function verifyToken(token) {
    if (typeof token !== 'string' || token.length > 4096) return null;
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== JWT_HEADER) return null;
    const expected = crypto.createHmac('sha256', SECRET).update(`${parts[0]}.${parts[1]}`).digest();
    const given = Buffer.from(parts[2], 'base64url');
    if (given.length !== expected.length || !crypto.timingSafeEqual(given, expected)) return null;
    let payload;
    try { payload = JSON.parse(Buffer.from(parts[1], 'base64url').toString()); } catch { return null; }
    if (!payload || typeof payload.exp !== 'number' || payload.exp <= Date.now() / 1000) return null;
    return usersByID.get(payload.uid) || null;
}

function bearer(req) {
    const header = req.headers.authorization;
    return header && header.startsWith('Bearer ') ? header.slice(7) : null;
}

// --- HTTP: POST /auth, POST /rooms ------------------------------------------------------------------------------------

function sendJSON(res, status, value) {
    const body = JSON.stringify(value);
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
}

function httpError(res, status, code, detail) {
    sendJSON(res, status, { code, title: http.STATUS_CODES[status], detail });
}

/// Reads a JSON object body of at most LIMITS.bodyBytes, then calls `then` with it; answers the errors itself.
function readJSON(req, res, then) {
    const chunks = [];
    let size = 0, failed = false;
    req.on('data', (chunk) => {
        if (failed) return;
        size += chunk.length;
        if (size > LIMITS.bodyBytes) {
            failed = true;
            httpError(res, 413, 'http:error:body-too-large', `the body is over ${LIMITS.bodyBytes} bytes`);
            req.destroy();
            return;
        }
        chunks.push(chunk);
    });
    req.on('end', () => {
        if (failed) return;
        let value;
        try { value = JSON.parse(Buffer.concat(chunks).toString()); } catch { value = undefined; }
        if (!value || typeof value !== 'object' || Array.isArray(value)) {
            httpError(res, 400, 'request:error:invalid-json', 'the body is not a JSON object');
            return;
        }
        then(value);
    });
}

/// A name or display name: a string of 1 to `max` characters after trimming, without control characters.
function validText(value, max) {
    if (typeof value !== 'string') return null;
    const text = value.trim();
    return text.length >= 1 && text.length <= max && !/[\u0000-\u001f\u007f]/.test(text) ? text : null;
}

function postAuth(req, res) {
    readJSON(req, res, (body) => {
        const name = validText(body.name, LIMITS.nameChars);
        if (!name) return httpError(res, 400, 'request:error:invalid-field', `name must be 1 to ${LIMITS.nameChars} characters`);
        let user = usersByName.get(name);
        if (!user) {
            if (usersByID.size >= LIMITS.users) return httpError(res, 503, 'server:error:unavailable', 'too many users');
            user = { id: `USR-${hex(16)}`, name };
            usersByName.set(name, user);
            usersByID.set(user.id, user);
        }
        const expires = new Date(Date.now() + TOKEN_SECONDS * 1000).toISOString();
        sendJSON(res, 200, { name, jwt: signToken(user), user_id: user.id, expires_at: expires, claim: hex(32) });
    });
}

function postRooms(req, res) {
    // As in Parlor's open mode, a room needs no token; a token that is given must be valid.
    const token = bearer(req);
    const creator = token === null ? null : verifyToken(token);
    if (token !== null && !creator) return httpError(res, 401, 'auth:error:invalid-token', 'invalid token');
    readJSON(req, res, (body) => {
        const displayName = validText(body.display_name, LIMITS.displayNameChars);
        if (!displayName) return httpError(res, 400, 'request:error:invalid-field', `display_name must be 1 to ${LIMITS.displayNameChars} characters`);
        const ttl = body.properties && Number.isInteger(body.properties.ttl) ? body.properties.ttl : 300;
        if (rooms.size >= LIMITS.rooms) return httpError(res, 503, 'room:error:server-full', 'too many rooms');
        const id = `RM-${hex(16)}`;
        const room = { id, createdBy: creator ? creator.id : null, members: new Map(), lastEventID: 0 };
        rooms.set(id, room);
        sendJSON(res, 201, { id, name: `rm-${id.slice(3)}`, display_name: displayName, created_at: isoNow(),
                             created_by: room.createdBy, member_count: 0,
                             properties: { ttl, max_members: null, mode: 'open' }, last_event_id: 0, locked: false });
    });
}

const server = http.createServer({ maxHeaderSize: 16384 }, (req, res) => {
    const path = req.url.split('?', 1)[0];
    if (req.method === 'POST' && path === '/auth') return postAuth(req, res);
    if (req.method === 'POST' && path === '/rooms') return postRooms(req, res);
    if (path === '/ws') {
        res.setHeader('Sec-WebSocket-Version', '13');
        return httpError(res, 426, 'http:error:malformed-request', '/ws needs a WebSocket upgrade (RFC 6455, version 13)');
    }
    if (path === '/auth' || path === '/rooms') return httpError(res, 405, 'http:error:method-not-allowed', `${req.method} ${path}`);
    httpError(res, 404, 'http:error:not-found', `no route for ${path}`);
});

// --- WebSocket: the upgrade checks the token first, as Parlor's does ---------------------------------------------------

const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxMessageBytes, perMessageDeflate: false, clientTracking: false });

server.on('upgrade', (req, socket, head) => {
    socket.on('error', () => {});
    const url = new URL(req.url, 'http://peer');
    if (url.pathname !== '/ws') return refuse(socket, 404, 'http:error:not-found', `no route for ${url.pathname}`);
    const token = url.searchParams.get('token') || bearer(req);
    if (!token) return refuse(socket, 401, 'auth:error:missing-token', '/ws needs a token');
    const user = verifyToken(token);
    if (!user) return refuse(socket, 401, 'auth:error:invalid-token', 'invalid token');
    wss.handleUpgrade(req, socket, head, (ws) => new Session(ws, user));
});

function refuse(socket, status, code, detail) {
    const body = JSON.stringify({ code, title: http.STATUS_CODES[status], detail });
    socket.end(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Type: application/json\r\n`
        + `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

// --- sessions: one per WebSocket --------------------------------------------------------------------------------------

class Session {
    constructor(ws, user) {
        this.ws = ws;
        this.user = user;
        this.memberships = new Map();  // room id -> member, for the rooms this connection is attached to
        this.lastHeard = Date.now();
        this.sentSinceLook = false;
        this.frameTokens = 2 * FRAME_RATE;
        // The first look after a random part of the interval, as Parlor's: connections opened together do not ping
        // in lockstep.
        this.nextLook = this.lastHeard + options.pingInterval * 1000 * (0.5 + Math.random() / 2);
        sessions.add(this);
        ws.on('message', (data, isBinary) => this.received(data, isBinary));
        ws.on('pong', () => this.heard());
        ws.on('ping', () => this.heard());
        ws.on('error', () => {});  // a protocol error closes the socket; 'close' follows
        ws.on('close', () => this.closed());
        this.send(JSON.stringify({ type: 'session:success', body: {
            session_id: `SES-${hex(16)}`, user: { id: user.id, name: user.name }, ice_servers: [], max_audio_senders: 8,
            media: { mode: 'sfu', slots: 8 } } }));
    }

    send(data) {
        this.ws.send(data, TEXT);
        this.sentSinceLook = true;
        // A consumer that does not read is cut off rather than growing memory, at Parlor's limit of unsent output.
        if (this.ws.bufferedAmount > MAX_UNSENT_BYTES) this.ws.terminate();
    }

    reply(type, tid, body) {
        this.send(`{"type":"${type}:success","tid":${JSON.stringify(tid)},"body":${body}}`);
    }

    error(tid, code, detail, requestType) {
        const body = requestType === undefined ? { code, detail } : { code, detail, request_type: requestType };
        this.send(JSON.stringify({ type: 'error', tid, body }));
    }

    /// A frame arrived: Parlor's frame rate limit (a token bucket, --frame-rate 200 a second, burst twice that, close
    /// 1008 above) and the heartbeat's clock. False when the connection is being closed for it.
    heard() {
        const now = Date.now();
        this.frameTokens = Math.min(2 * FRAME_RATE, this.frameTokens + (now - this.lastHeard) * FRAME_RATE / 1000) - 1;
        this.lastHeard = now;
        if (this.frameTokens >= 0) return true;
        this.ws.close(1008, 'too many frames');
        return false;
    }

    received(data, isBinary) {
        if (!this.heard()) return;
        if (isBinary) return this.error(null, 'request:error:binary-unsupported', 'the protocol is JSON text');
        let message;
        try { message = JSON.parse(data.toString()); } catch { message = undefined; }
        if (!message || typeof message !== 'object' || Array.isArray(message)) {
            return this.error(null, 'request:error:invalid-json', 'not a JSON object');
        }
        const tid = typeof message.tid === 'string' || typeof message.tid === 'number' ? message.tid : null;
        const type = message.type;
        if (typeof type !== 'string') return this.error(tid, 'request:error:missing-field', 'type is missing');
        const body = message.body && typeof message.body === 'object' ? message.body : {};
        switch (type) {
        case 'session:ping': return this.reply(type, tid, '{}');
        case 'conversation:join': return this.withRoom(type, tid, body, join);
        case 'conversation:leave': return this.withRoom(type, tid, body, leave);
        default: return this.error(tid, 'request:error:unknown-type', `unknown request type ${type.slice(0, 64)}`, type.slice(0, 64));
        }
    }

    withRoom(type, tid, body, action) {
        if (typeof body.cid !== 'string') return this.error(tid, 'request:error:missing-field', 'body.cid is missing', type);
        const room = rooms.get(body.cid);
        if (!room) return this.error(tid, 'room:error:not-found', `no room with id ${body.cid.slice(0, 64)}`, type);
        action(this, tid, room);
    }

    closed() {
        sessions.delete(this);
        for (const [, member] of this.memberships) {
            member.sessions.delete(this);
            // Like Parlor's grace period: the member stays until no connection of its user came back in time.
            if (member.sessions.size === 0) member.graceTimer = setTimeout(() => drop(member), options.gracePeriod * 1000);
        }
        this.memberships.clear();
    }
}
const TEXT = { binary: false };
const MAX_UNSENT_BYTES = 1024 * 1024;
const FRAME_RATE = 200;

// --- rooms: join, leave, drop, and the fan-out ------------------------------------------------------------------------

function join(session, tid, room) {
    let member = room.members.get(session.user.id);
    const isNew = !member;
    if (member) {
        // Idempotent, as in Parlor: the same member, no new event; a member in its grace period is present again.
        if (member.graceTimer) { clearTimeout(member.graceTimer); member.graceTimer = null; }
    } else {
        if (room.members.size >= LIMITS.membersPerRoom) return session.error(tid, 'room:error:full', 'the room is full', 'conversation:join');
        const user = session.user, joined = isoNow(), id = `MEM-${hex(16)}`;
        const role = room.createdBy === user.id ? 'moderator' : 'speaker';
        const userJSON = { id: user.id, name: user.name };
        member = { id, user, room, role, joined, sessions: new Set(), graceTimer: null,
                   // Encoded once: spliced into every join reply while the member stays, and the events' body.
                   record: JSON.stringify({ member_id: id, user: userJSON, state: 'JOINED', timestamp: { joined },
                                            media: { audio_settings: { enabled: false, muted: false } }, role,
                                            hand_raised: false, hand_raised_at: null }),
                   eventBody: JSON.stringify({ member_id: id, user: userJSON }) };
        room.members.set(user.id, member);
        room.lastEventID += 1;
    }
    member.sessions.add(session);
    session.memberships.set(room.id, member);
    const records = [];
    for (const other of room.members.values()) records.push(other.record);
    session.reply('conversation:join', tid, `{"member_id":"${member.id}","cid":"${room.id}","members":[${records.join(',')}],`
        + `"last_event_id":${room.lastEventID},"mode":"open","locked":false,"role":"${member.role}"}`);
    if (isNew) fanOut(room, event('member:joined', room, room.lastEventID, member, member.joined, member.eventBody), null);
}

function leave(session, tid, room) {
    const member = room.members.get(session.user.id);
    if (!member) return session.error(tid, 'member:error:not-joined', `you have not joined room ${room.id}`, 'conversation:leave');
    session.reply('conversation:leave', tid, '{}');
    remove(member, 'left');
}

function drop(member) {
    member.graceTimer = null;
    if (member.sessions.size === 0 && member.room.members.get(member.user.id) === member) remove(member, 'dropped');
}

/// Ends a membership: member:left to the room's members and to the leaver's own connections, then no more events.
function remove(member, reason) {
    const room = member.room;
    room.members.delete(member.user.id);
    if (member.graceTimer) { clearTimeout(member.graceTimer); member.graceTimer = null; }
    const body = `${member.eventBody.slice(0, -1)},"reason":"${reason}"}`;
    fanOut(room, event('member:left', room, ++room.lastEventID, member, isoNow(), body), member.sessions);
    for (const session of member.sessions) session.memberships.delete(room.id);
    member.sessions.clear();
}

function event(type, room, id, member, timestamp, body) {
    return `{"type":"${type}","cid":"${room.id}","id":${id},"from":"${member.id}","timestamp":"${timestamp}","body":${body}}`;
}

/// One event to every connection attached to the room (and `extra`): encoded once, the same bytes to each.
function fanOut(room, text, extra) {
    const data = Buffer.from(text);
    for (const member of room.members.values()) for (const session of member.sessions) session.send(data);
    if (extra) for (const session of extra) session.send(data);
}

// --- heartbeat: Parlor's rule (ping a peer silent for an interval, or one sent nothing since the last look; close
// one silent for the pong timeout), looked at every 100 ms, the leeway of Parlor's timers ----------------------------

setInterval(() => {
    const now = Date.now();
    for (const session of sessions) {
        if (now < session.nextLook) continue;
        const silentFor = now - session.lastHeard;
        if (silentFor > options.pongTimeout * 1000) { session.ws.terminate(); continue; }
        const sent = session.sentSinceLook;
        session.sentSinceLook = false;
        if (silentFor < options.pingInterval * 1000 && sent) {
            session.nextLook = now + options.pingInterval * 1000 - silentFor;
            continue;
        }
        session.ws.ping();
        session.nextLook = now + options.pingInterval * 1000;
    }
}, 100);

for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => process.exit(0));
server.on('clientError', (error, socket) => { if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'); });
server.listen(options.port, options.host, () => {
    const address = server.address();
    process.stdout.write(`listening on http://${address.address}:${address.port}\n`);
});
