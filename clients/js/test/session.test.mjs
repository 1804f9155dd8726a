// The client against a real server: join/leave, drop and resume, dropped past the grace period, the claim kept
// per name, typed errors, close codes, and what expect()/expectNone() say when they fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Parlor, ParlorError, ExpectationError } from '../parlor.js';
import { useServer } from '../support/server.mjs';

const context = useServer();
const T = { timeout: 30000 };

async function roomWithAliceAndBob() {
  const { parlor } = context.server;
  const room = await parlor.createRoom('Standup');
  const bob = await parlor.session('bob');
  await bob.join(room.id);
  const alice = await parlor.session('alice');
  const membership = await alice.join(room.id);
  await bob.expect({ type: 'member:joined', name: 'alice' }, { timeout: 2000 });
  return { parlor, room, alice, bob, membership };
}

test('join and leave: the other member sees both, with reason left', T, async () => {
  const { room, alice, bob, membership } = await roomWithAliceAndBob();
  assert.equal(membership.cid, room.id);
  assert.deepEqual(membership.members.map((m) => m.user.name), ['bob', 'alice']);
  assert.ok(alice.rooms.has(room.id));
  const page = await bob.members(room.id, { pageSize: 10 });
  assert.deepEqual(page.members.map((m) => m.user.name).sort(), ['alice', 'bob']);
  await alice.leave(room.id);
  const left = await bob.expect({ type: 'member:left', name: 'alice' }, { timeout: 2000 });
  assert.equal(left.body.reason, 'left');
  assert.ok(!alice.rooms.has(room.id));
  const history = await bob.events(room.id, { since: 0 });
  assert.deepEqual(history.events.map((e) => e.type), ['member:joined', 'member:joined', 'member:left']);
});

test('a network drop reconnects and resumes: nobody sees the member leave', T, async () => {
  const { room, alice, bob } = await roomWithAliceAndBob();
  const before = alice.sessionId;
  alice.simulateNetworkDrop();
  const result = await alice.expectResumed({ timeout: 5000 });
  assert.deepEqual(result.resumed, [room.id]);
  assert.deepEqual(result.lost, []);
  assert.equal(alice.state, 'connected');
  assert.notEqual(alice.sessionId, before);
  await bob.expectNone({ type: 'member:left', name: 'alice' }, { timeout: 1500 });  // past the 1 s grace period
  // Events sent while she was away are replayed after the resume.
  alice.pauseReconnects();
  alice.simulateNetworkDrop();
  await alice.expectState('reconnecting', { timeout: 2000 });
  await bob.sendMessage(room.id, 'while you were out');
  alice.resumeReconnects();
  await alice.expectResumed({ timeout: 5000 });
  await alice.expect({ type: 'message:text', text: 'while you were out' }, { timeout: 2000 });
  await alice.sendMessage(room.id, 'back');
  await bob.expect({ type: 'message:text', text: 'back', name: 'alice' }, { timeout: 2000 });
});

test('dropped past the grace period (server side): member:left dropped, and the resume reports the room lost', T, async () => {
  const { parlor, room, alice, bob, membership } = await roomWithAliceAndBob();
  alice.pauseReconnects();
  await parlor.dropMember(room.id, membership.member_id);
  await alice.expectState('reconnecting', { timeout: 2000 });
  const left = await bob.expect({ type: 'member:left', name: 'alice' }, { timeout: 5000 });
  assert.equal(left.body.reason, 'dropped');
  alice.resumeReconnects();
  const result = await alice.expectResumed({ timeout: 5000 });
  assert.deepEqual(result.lost, [room.id]);
  assert.equal(result.lostReasons[room.id], 'membership-ended');
  assert.ok(!alice.rooms.has(room.id));
  await alice.join(room.id);  // join again to come back
  await bob.expect({ type: 'member:joined', name: 'alice' }, { timeout: 2000 });
});

test('the claim is kept per name: the same identity comes back, a stranger with the name gets another', T, async () => {
  const { parlor, url } = context.server;
  const first = await parlor.auth('alice');
  const alice = await parlor.connect(first.jwt);
  const again = await parlor.auth('  alice ');  // trimmed: the same name, so the same claim
  assert.equal(again.user_id, first.user_id);
  assert.equal(again.claim, first.claim);
  const stranger = await new Parlor(url).auth('alice');  // no claim, while alice is connected
  assert.notEqual(stranger.user_id, first.user_id);
  assert.equal(stranger.name, 'alice');
  await alice.close();
});

test('errors carry the server code, detail, status and request type', T, async () => {
  const { parlor } = context.server;
  const alice = await parlor.session('alice');
  const notFound = await alice.join('RM-nope').catch((error) => error);
  assert.ok(notFound instanceof ParlorError);
  assert.equal(notFound.code, 'room:error:not-found');
  assert.equal(notFound.requestType, 'conversation:join');
  assert.match(notFound.detail, /RM-nope/);
  const unknown = await alice.request('no:such:type', {}).catch((error) => error);
  assert.equal(unknown.code, 'request:error:unknown-type');
  const room = await parlor.createRoom('Errors');
  const notJoined = await alice.leave(room.id).catch((error) => error);
  assert.equal(notJoined.code, 'member:error:not-joined');
  const http = await parlor.room('RM-nope').catch((error) => error);
  assert.equal(http.code, 'room:error:not-found');
  assert.equal(http.status, 404);
  const unreachable = await new Parlor('http://127.0.0.1:1').rooms().catch((error) => error);
  assert.equal(unreachable.code, 'client:error:connection-failed');
  const refused = await new Parlor('http://127.0.0.1:1').connect('x').catch((error) => error);
  assert.equal(refused.code, 'client:error:connection-failed');
  assert.throws(() => new Parlor('ftp://example'), (error) => error.code === 'client:error:invalid-url');
  await alice.close();
  const closed = await alice.ping().catch((error) => error);
  assert.equal(closed.code, 'client:error:not-connected');
});

test('close codes: a server reset (4004) ends the session with session:error:server-reset, no resume', T, async () => {
  const { parlor } = context.server;
  const alice = await parlor.session('alice');
  const room = await parlor.createRoom('Reset');
  await alice.join(room.id);
  await parlor.reset();
  await alice.expectState('offline', { timeout: 3000 });
  assert.equal(alice.endError.code, 'session:error:server-reset');
  assert.equal(alice.resumes.length, 0);
});

test('close codes: a session resumed elsewhere (4005) goes offline and is not taken back', T, async () => {
  const { parlor } = context.server;
  const room = await parlor.createRoom('Takeover');
  const first = await parlor.session('alice');
  await first.join(room.id);
  const second = await parlor.connect((await parlor.auth('alice')).jwt);
  const reply = await second.request('session:resume', { session_id: first.sessionId, last_event_ids: { [room.id]: 0 } });
  assert.deepEqual(reply.resumed.map((r) => r.cid), [room.id]);
  await first.expectState('offline', { timeout: 3000 });
  assert.equal(first.endError.code, 'session:error:taken-over');
  await second.ping();  // still the session's holder: nothing took it back
  assert.equal(second.state, 'connected');
});

test('expect and expectNone fail with every event received listed', T, async () => {
  const { room, bob } = await roomWithAliceAndBob();
  const missed = await bob.expect({ type: 'member:left', name: 'carol' }, { timeout: 200 }).catch((error) => error);
  assert.ok(missed instanceof ExpectationError);
  assert.match(missed.message, /expected \{"type":"member:left","name":"carol"\} within 200 ms/);
  assert.match(missed.message, /#1 member:joined RM-\S+ .*"name":"bob"/);
  assert.match(missed.message, /#2 member:joined RM-\S+ .*"name":"alice"/);
  assert.equal(missed.received.length, 2);
  await bob.sendMessage(room.id, 'hello');
  const unwanted = await bob.expectNone({ type: 'message:text' }, { timeout: 1000 }).catch((error) => error);
  assert.ok(unwanted instanceof ExpectationError);
  assert.match(unwanted.message, /expected no \{"type":"message:text"\}.*got #3 message:text/);
  assert.match(unwanted.message, /#3 message:text .*"text":"hello"/);
  await bob.expect((event) => event.body?.text === 'hello', { timeout: 1000 });  // a function matcher
});
