#!/usr/bin/env node
// bench/node-peer/check.js URL: checks that a server answers the rooms protocol the way parlor-bench relies on, so the
// same script shows that Parlor and the Node peer (server.js) behave alike. Exits 0 when every check passed.
//   NODE_PATH=/usr/share/nodejs node bench/node-peer/check.js http://127.0.0.1:PORT
'use strict';
const http = require('http');
const WebSocket = require('ws');

const base = process.argv[2];
if (!base || !/^http:\/\/127\.\d+\.\d+\.\d+:\d+$/.test(base)) {
    process.stderr.write('usage: check.js http://127.x.x.x:PORT (loopback only)\n');
    process.exit(2);
}
const tag = Date.now().toString(36);
let failures = 0;
function check(ok, what) {
    process.stdout.write(`${ok ? 'ok  ' : 'FAIL'} ${what}\n`);
    if (!ok) failures += 1;
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function post(path, body, token) {
    return new Promise((resolve, reject) => {
        const data = JSON.stringify(body);
        const headers = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(data) };
        if (token) headers.Authorization = `Bearer ${token}`;
        const req = http.request(`${base}${path}`, { method: 'POST', headers }, (res) => {
            let text = '';
            res.on('data', (chunk) => { text += chunk; });
            res.on('end', () => resolve({ status: res.statusCode, body: JSON.parse(text) }));
        });
        req.on('error', reject);
        req.end(data);
    });
}

/// A client that keeps every message and answers request() with the reply carrying its tid.
function connect(token) {
    return new Promise((resolve, reject) => {
        const ws = new WebSocket(`${base.replace('http', 'ws')}/ws?token=${encodeURIComponent(token)}`);
        const client = { ws, messages: [], waiting: new Map(), tid: 0 };
        client.request = (type, body) => new Promise((done) => {
            const tid = `t${++client.tid}`;
            client.waiting.set(tid, done);
            ws.send(JSON.stringify({ type, tid, body }));
        });
        ws.on('message', (data) => {
            const message = JSON.parse(data.toString());
            client.messages.push(message);
            const done = message.tid && client.waiting.get(message.tid);
            if (done) { client.waiting.delete(message.tid); done(message); }
        });
        ws.on('open', () => resolve(client));
        ws.on('unexpected-response', (req, res) => reject(new Error(`upgrade answered ${res.statusCode}`)));
        ws.on('error', () => {});
    });
}

function refusedStatus(token) {
    return new Promise((resolve) => {
        const ws = new WebSocket(`${base.replace('http', 'ws')}/ws?token=${token}`);
        ws.on('unexpected-response', (req, res) => { resolve(res.statusCode); res.resume(); });
        ws.on('open', () => { resolve(101); ws.close(); });
        ws.on('error', () => {});
    });
}

/// Ids of one room as a member saw them: consecutive from its join reply's last_event_id, until it left.
function gapFree(client, room) {
    let last = null, ok = true;
    for (const message of client.messages) {
        if (message.type === 'conversation:join:success' && message.body.cid === room) last = message.body.last_event_id - 1;
        if (message.cid !== room || message.id === undefined || last === null) continue;
        if (message.id !== last + 1) ok = false;
        last = message.id;
        if (message.type === 'member:left' && message.body.member_id === client.memberID) last = null;
    }
    return ok;
}

async function main() {
    const auths = [];
    for (let index = 0; index < 4; index++) auths.push(await post('/auth', { name: `check-${tag}-${index}` }));
    check(auths.every((a) => a.status === 200 && typeof a.body.jwt === 'string'), 'POST /auth answers 200 with a jwt');
    const room = await post('/rooms', { display_name: `check ${tag}`, properties: { ttl: 3600 } }, auths[0].body.jwt);
    check(room.status === 201 && typeof room.body.id === 'string', 'POST /rooms answers 201 with an id');
    const cid = room.body.id;
    check(await refusedStatus('not.a.token') === 401, 'the upgrade with an invalid token is refused with 401');

    const clients = [];
    for (const auth of auths) clients.push(await connect(auth.body.jwt));
    await sleep(100);
    check(clients.every((c) => c.messages[0] && c.messages[0].type === 'session:success'), 'session:success comes first');
    for (const client of clients) {
        const reply = await client.request('conversation:join', { cid });
        client.memberID = reply.body.member_id;
    }
    const last = clients[3].messages.find((m) => m.type === 'conversation:join:success').body;
    check(last.members.length === 4 && last.members[3].member_id === clients[3].memberID,
        'the join reply lists the members in join order, the joiner last');
    for (let round = 0; round < 50; round++) {
        const client = clients[round % 4];
        const left = await client.request('conversation:leave', { cid });
        if (left.type !== 'conversation:leave:success') check(false, `leave answered ${left.type}`);
        const joined = await client.request('conversation:join', { cid });
        client.memberID = joined.body.member_id;
    }
    const ping = await clients[0].request('session:ping', {});
    check(ping.type === 'session:ping:success', 'session:ping is answered');
    await sleep(200);
    check(clients.every((c) => gapFree(c, cid)), 'every member saw gap-free ids while it was a member');
    const joinedEvents = clients[0].messages.filter((m) => m.type === 'member:joined').length;
    const leftEvents = clients[0].messages.filter((m) => m.type === 'member:left').length;
    check(joinedEvents === 54 && leftEvents === 50, `the first member saw every join and leave, its own too (${joinedEvents}, ${leftEvents})`);

    const errors = [
        [await clients[1].request('conversation:join', { cid: 'RM-none' }), 'room:error:not-found'],
        [await clients[1].request('no:such:type', {}), 'request:error:unknown-type'],
    ];
    await clients[2].request('conversation:leave', { cid });
    errors.push([await clients[2].request('conversation:leave', { cid }), 'member:error:not-joined']);
    for (const [reply, code] of errors) check(reply.type === 'error' && reply.body.code === code, `error ${code}`);
    clients[1].ws.send('not json');
    await sleep(100);
    const invalid = clients[1].messages[clients[1].messages.length - 1];
    check(invalid.type === 'error' && invalid.tid === null && invalid.body.code === 'request:error:invalid-json', 'invalid JSON');
    for (const client of clients) client.ws.close(1000);

}

const watchdog = setTimeout(() => { process.stdout.write('FAIL timed out after 180 s\n'); process.exit(1); }, 180000);
main().then(() => {
    clearTimeout(watchdog);
    process.stdout.write(failures ? `${failures} checks failed\n` : 'all checks passed\n');
    process.exit(failures ? 1 : 0);
}, (error) => {
    process.stdout.write(`FAIL ${error.message}\n`);
    process.exit(1);
});
