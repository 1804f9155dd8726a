// Close 4001: the server ends a session whose token expired; parlor.session(name) gets a new token (with the kept
// claim, so the same identity) and resumes, and nobody sees the member leave.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { useServer } from '../support/server.mjs';

const context = useServer(['--grace-period', '3', '--token-ttl', '2']);

test('an expired token is renewed and the room resumed', { timeout: 30000 }, async () => {
  const { parlor } = context.server;
  const room = await parlor.createRoom('Long call');
  const bob = await parlor.session('bob');
  await bob.join(room.id);
  const alice = await parlor.session('alice');
  const firstToken = alice.token;
  await alice.join(room.id);
  const result = await alice.expectResumed({ timeout: 8000 });
  assert.deepEqual(result.resumed, [room.id]);
  assert.equal(alice.lastCloseCode, 4001);
  assert.notEqual(alice.token, firstToken);
  await alice.sendMessage(room.id, 'still here');
  await bob.expect({ type: 'message:text', text: 'still here', name: 'alice' }, { timeout: 2000 });
  await bob.expectNone({ type: 'member:left' }, { timeout: 500 });
});
