// A stage room through the client: roles, hands, promotion, and what a listener may not do.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServer } from '../support/server.mjs';

const context = useServer();

test('a stage room: a listener raises a hand, the moderator brings them on stage, they may send audio', { timeout: 30000 }, async () => {
  const { parlor } = context.server;
  const alice = await parlor.session('alice');
  const { jwt } = await parlor.auth('alice');
  const room = await parlor.createRoom('Town hall', { properties: { mode: 'stage' }, token: jwt });
  assert.equal(room.properties.mode, 'stage');
  const listed = await parlor.rooms();
  assert.ok(listed.some((r) => r.id === room.id && r.properties.mode === 'stage'));
  const moderator = await alice.join(room.id);
  assert.equal(moderator.role, 'moderator');
  const bob = await parlor.session('bob');
  const joined = await bob.join(room.id);
  assert.equal(joined.role, 'listener');
  assert.equal(joined.mode, 'stage');
  const refused = await bob.enableAudio(room.id).catch((error) => error);
  assert.equal(refused.code, 'member:error:not-allowed');
  await bob.raiseHand(room.id);
  await alice.expect({ type: 'member:hand', name: 'bob', raised: true }, { timeout: 2000 });
  const hands = await alice.members(room.id, { hands: true });
  assert.deepEqual(hands.members.map((m) => m.user.name), ['bob']);
  await alice.setRole(room.id, joined.member_id, 'speaker');
  await bob.expect({ type: 'member:role', role: 'speaker', member: joined.member_id }, { timeout: 2000 });
  await bob.enableAudio(room.id);
  await alice.expect({ type: 'member:media', name: 'bob' }, { timeout: 2000 });
  const notModerator = await bob.lock(room.id).catch((error) => error);
  assert.equal(notModerator.code, 'member:error:not-allowed');
  await alice.lock(room.id);
  await bob.expect({ type: 'room:locked', locked: true }, { timeout: 2000 });
});
