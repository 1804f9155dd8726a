// Key agreement: pairwise wrapping of sender keys, the e2ee:key message shape, and the KeyRing's rotation.
import './webcrypto.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toBase64, fromBase64 } from '../../Sources/ParlorApp/Web/e2ee-bytes.js';
import {
  generateEphemeral, pairSecret, wrapSenderKey, unwrapSenderKey, parseKeyMessage, MAX_KEYS_PER_MESSAGE,
  MAX_KEY_MESSAGE_BYTES, WRAPPED_BYTES,
} from '../../Sources/ParlorApp/Web/e2ee-wrap.js';
import { generateSenderKey, keyCheck, MAX_RATCHET_STEPS } from '../../Sources/ParlorApp/Web/e2ee-senderkey.js';
import { FrameEncryptor, FrameDecryptor } from '../../Sources/ParlorApp/Web/e2ee-frames.js';
import { ROOM, memberId, makeMember, relay, joinAll } from './support.mjs';

async function pair() {
  const a = await generateEphemeral();
  const b = await generateEphemeral();
  const c = await generateEphemeral();
  const key = await generateSenderKey();
  const names = { roomId: ROOM, fromId: memberId(1), toId: memberId(2), keyId: 7, fromPublicRaw: a.publicRaw, toPublicRaw: b.publicRaw };
  const wrapped = fromBase64(await wrapSenderKey({ secret: await pairSecret(a.privateKey, b.publicRaw), raw: key.raw, ...names }));
  return { a, b, c, key, names, wrapped, secretB: await pairSecret(b.privateKey, a.publicRaw) };
}

test('a wrapped sender key unwraps to the same key for its recipient', async () => {
  const { key, names, wrapped, secretB } = await pair();
  assert.equal(wrapped.length, WRAPPED_BYTES);
  const unwrapped = await unwrapSenderKey({ secret: secretB, wrapped, ...names });
  assert.ok(unwrapped, 'the recipient unwraps it');
  assert.equal(unwrapped.extractable, false);
  assert.equal(await keyCheck(unwrapped), await keyCheck(key.base));
});

test('unwrapping refuses another recipient, room, sender, key id, public key, or tampered bytes', async () => {
  const { a, b, c, names, wrapped, secretB } = await pair();
  const secretC = await pairSecret(c.privateKey, a.publicRaw);
  // Another member (its own ECDH secret with the sender), even claiming to be the recipient.
  assert.equal(await unwrapSenderKey({ secret: secretC, wrapped, ...names }), null);
  assert.equal(await unwrapSenderKey({ secret: secretC, wrapped, ...names, toPublicRaw: c.publicRaw }), null);
  // The right secret, but any name changed.
  for (const change of [{ roomId: 'RM-ffffffffffffffffffffffffffffffff' }, { toId: memberId(3) }, { fromId: memberId(3) },
    { keyId: 8 }, { fromPublicRaw: c.publicRaw }, { toPublicRaw: a.publicRaw }]) {
    assert.equal(await unwrapSenderKey({ secret: secretB, wrapped, ...names, ...change }), null, JSON.stringify(Object.keys(change)));
  }
  // Every byte flipped in turn.
  for (let i = 0; i < wrapped.length; i += 1) {
    const tampered = Uint8Array.from(wrapped);
    tampered[i] ^= 0x01;
    assert.equal(await unwrapSenderKey({ secret: secretB, wrapped: tampered, ...names }), null, `byte ${i}`);
  }
  assert.equal(await unwrapSenderKey({ secret: secretB, wrapped: wrapped.subarray(1), ...names }), null);
  // The untouched original still opens: the refusals above were about the changes.
  assert.ok(await unwrapSenderKey({ secret: secretB, wrapped, ...names }));
  assert.equal(await pairSecret(b.privateKey, new Uint8Array(65)), null, 'not a curve point');
});

test('e2ee:key bodies are checked for shape before anything is computed', async () => {
  const member = await makeMember(1);
  const other = await makeMember(2);
  await relay([member, other], member, await member.ring.announce());
  const [body] = await member.ring.messagesFor();
  assert.ok(parseKeyMessage(body), 'the real message parses');
  const broken = [
    null, 'text', { ...body, v: 2 }, { ...body, public_key: 'not base64!' }, { ...body, public_key: toBase64(new Uint8Array(64)) },
    { ...body, identity_key: undefined }, { ...body, signature: toBase64(new Uint8Array(63)) }, { ...body, keys: 'x' },
    { ...body, keys: [{ ...body.keys[0], key_id: 256 }] }, { ...body, keys: [{ ...body.keys[0], key_id: 1.5 }] },
    { ...body, keys: [{ ...body.keys[0], to: 'MEM-"quoted"' }] }, { ...body, keys: [{ ...body.keys[0], wrapped: toBase64(new Uint8Array(45)) }] },
    { ...body, keys: Array.from({ length: MAX_KEYS_PER_MESSAGE + 1 }, () => body.keys[0]) },
  ];
  for (const bad of broken) assert.equal(parseKeyMessage(bad), null, JSON.stringify(bad)?.slice(0, 80));
  for (const bad of broken) assert.deepEqual(await other.ring.receive(member.id, bad), { ok: false, reason: 'malformed' });
});

test('a large room is split into messages of at most MAX_KEYS_PER_MESSAGE keys, each within the size bound', async () => {
  const sender = await makeMember(1);
  const others = [];
  for (let n = 2; n <= MAX_KEYS_PER_MESSAGE * 2 + 2; n += 1) others.push(await makeMember(n));
  for (const other of others) await sender.ring.receive(other.id, (await other.ring.announce())[0]);
  const messages = await sender.ring.messagesFor();
  assert.deepEqual(messages.map((message) => message.keys.length), [MAX_KEYS_PER_MESSAGE, MAX_KEYS_PER_MESSAGE, 1]);
  for (const message of messages) assert.ok(JSON.stringify(message).length <= MAX_KEY_MESSAGE_BYTES, `${JSON.stringify(message).length} bytes`);
  const recipients = messages.flatMap((message) => message.keys.map((entry) => entry.to));
  assert.deepEqual(new Set(recipients), new Set(others.map((other) => other.id)));
  // The last member finds its key in the third message only, and takes it.
  const last = others[others.length - 1];
  const results = [];
  for (const message of messages) results.push(await last.ring.receive(sender.id, message));
  // (The sender ratcheted or renewed its key for each of the 129 newcomers: its current id is past 128.)
  assert.deepEqual(results.map((result) => result.installed?.keyId ?? null), [null, null, sender.ring.currentKey().id]);
  assert.ok(sender.ring.currentKey().id > 128);
});

async function holdsCurrentKey(member, other) {
  const { id, baseKey } = other.ring.currentKey();
  const held = await member.ring.keyOf(other.id, id);
  return held !== null && (await keyCheck(held)) === (await keyCheck(baseKey));
}

test('members who join one after another all hold each other\'s current keys', async () => {
  const room = await joinAll(3);
  for (const member of room) {
    for (const other of room) {
      if (other !== member) assert.ok(await holdsCurrentKey(member, other), `${member.id} holds ${other.id}'s key`);
    }
  }
  // The first member ratcheted once for each newcomer, without sending the others anything.
  assert.equal(room[0].ring.currentKey().id, 2);
  assert.equal(room[2].ring.currentKey().id, 0);
});

test('a late joiner gets the current keys but cannot go back to the keys before it joined', async () => {
  const room = await joinAll(3);
  const before = room.map((member) => member.ring.currentKey());
  const [late] = await joinAll(1, undefined, room).then((all) => all.slice(3));
  for (const [index, other] of room.slice(0, 3).entries()) {
    assert.equal(other.ring.currentKey().id, (before[index].id + 1) & 0xff, 'one ratchet');
    assert.ok(await holdsCurrentKey(late, other), 'the late joiner holds the new key');
    assert.equal(await late.ring.keyOf(other.id, before[index].id), null, 'but not the one before');
    for (const member of room.slice(0, 3)) {
      if (member !== other) assert.ok(await holdsCurrentKey(member, other), 'the others follow the ratchet by themselves');
    }
    assert.ok(await holdsCurrentKey(other, late));
  }
});

test('after MAX_RATCHET_STEPS - 1 ratchets the next newcomer brings a fresh key for everyone', async () => {
  const [a, b] = await joinAll(2);
  a.ring.own.ratchets = MAX_RATCHET_STEPS - 1;  // as after that many joins
  const keyBefore = a.ring.currentKey();
  const room = await joinAll(1, undefined, [a, b]);
  const late = room[2];
  const { id, baseKey } = a.ring.currentKey();
  assert.equal(id, (keyBefore.id + 1) & 0xff);
  assert.equal(a.ring.own.ratchets, 0);
  // b could not have ratcheted to it: it received it wrapped.
  assert.equal(b.ring.currentKeyOf(a.id).id, id);
  assert.equal(await keyCheck(b.ring.currentKeyOf(a.id).baseKey), await keyCheck(baseKey));
  assert.ok(await holdsCurrentKey(late, a));
});

test('a signature for another member, room or key is refused, and so is a changed identity', async () => {
  const [a, b] = await joinAll(2);
  const [body] = await a.ring.messagesFor();
  const intruder = await makeMember(9);
  // The envelope's `from` says another member: the signature names a.
  assert.deepEqual(await b.ring.receive(intruder.id, body), { ok: false, reason: 'bad-signature' });
  // Another ephemeral key under a's signature.
  const [intruderBody] = await intruder.ring.messagesFor();
  assert.deepEqual(await b.ring.receive(a.id, { ...body, public_key: intruderBody.public_key }), { ok: false, reason: 'bad-signature' });
  // A message from another room's session of the same identity.
  const elsewhere = await makeMember(1, 'RM-ffffffffffffffffffffffffffffffff');
  const [elsewhereBody] = await elsewhere.ring.messagesFor();
  assert.deepEqual(await b.ring.receive(a.id, elsewhereBody), { ok: false, reason: 'bad-signature' });
  // a's member id signed by another identity (the intruder signs its own claim): a changed identity mid-session.
  const { signEphemeral } = await import('../../Sources/ParlorApp/Web/e2ee-identity.js');
  const claim = {
    ...intruderBody,
    signature: await signEphemeral(intruder.identity, { roomId: intruder.ring.roomId, memberId: a.id, ephemeralPublicRaw: intruder.ring.ephemeral.publicRaw }),
  };
  assert.deepEqual(await b.ring.receive(a.id, claim), { ok: false, reason: 'identity-changed' });
  // None of it replaced what b holds of a.
  assert.equal(b.ring.identityKeyOf(a.id), a.identity.publicBase64);
  assert.ok(await holdsCurrentKey(b, a));
});

test('the same message delivered again installs nothing and gets no reply', async () => {
  const [a, b] = await joinAll(2);
  const [body] = await a.ring.messagesFor();
  const again = await b.ring.receive(a.id, body);
  assert.equal(again.ok, true);
  assert.equal(again.installed, null);
  assert.deepEqual(again.sendTo, []);
});

test('on a leave the others rotate; the leaver cannot unwrap the new key; frames in flight decrypt for a bound', async () => {
  const room = await joinAll(3);
  const [a, b, x] = room;
  const oldKey = a.ring.currentKey();
  let clock = 0;
  const decryptor = new FrameDecryptor({ now: () => clock, previousKeyGraceMs: 2000 });
  await decryptor.setKey(oldKey.id, await b.ring.keyOf(a.id, oldKey.id));
  const encryptor = new FrameEncryptor();
  await encryptor.setKey(oldKey.id, oldKey.baseKey);
  const inFlight = await encryptor.encrypt(new Uint8Array([1, 2, 3]).buffer);
  const lateInFlight = await encryptor.encrypt(new Uint8Array([4, 5, 6]).buffer);

  // x leaves: a and b each rotate and send their new key to the rest.
  const rotation = await a.ring.removeMember(x.id);
  assert.equal(rotation.keyId, oldKey.id + 1);
  assert.deepEqual(rotation.messages.flatMap((message) => message.keys.map((entry) => entry.to)), [b.id]);
  await encryptor.setKey(rotation.keyId, rotation.baseKey);
  const afterLeave = await encryptor.encrypt(new Uint8Array([7, 8, 9]).buffer);

  // Even if the server still hands x the rotation, x learns nothing.
  const xResult = await x.ring.receive(a.id, rotation.messages[0]);
  assert.equal(xResult.ok, true);
  assert.equal(xResult.installed, null, 'there is no entry for x');
  // Ratcheting what it holds gives x a key under the new id, but not the new key: a rotation is fresh, not a ratchet.
  const guess = await x.ring.keyOf(a.id, rotation.keyId);
  assert.notEqual(await keyCheck(guess), await keyCheck(rotation.baseKey));
  // Nor by taking b's entry as its own.
  const stolen = { ...rotation.messages[0], keys: rotation.messages[0].keys.map((entry) => ({ ...entry, to: x.id })) };
  const stolenResult = await x.ring.receive(a.id, stolen);
  assert.equal(stolenResult.installed, null);
  assert.equal(stolenResult.unreadable, 1);
  // x's decryptor of a (holding only the old key) cannot read a frame sent after the leave.
  const xDecryptor = new FrameDecryptor();
  await xDecryptor.setKey(oldKey.id, await x.ring.keyOf(a.id, oldKey.id));
  assert.equal(await xDecryptor.decrypt(afterLeave.slice(0)), null);

  // b takes the new key; a frame from before the leave still decrypts within the bound, not after it.
  const bResult = await b.ring.receive(a.id, rotation.messages[0]);
  assert.deepEqual([bResult.installed?.memberId, bResult.installed?.keyId], [a.id, rotation.keyId]);
  await decryptor.setKey(rotation.keyId, bResult.installed.baseKey);
  assert.deepEqual(new Uint8Array(await decryptor.decrypt(afterLeave.slice(0))), new Uint8Array([7, 8, 9]));
  clock = 1999;
  assert.deepEqual(new Uint8Array(await decryptor.decrypt(inFlight.slice(0))), new Uint8Array([1, 2, 3]));
  clock = 2001;
  assert.equal(await decryptor.decrypt(lateInFlight.slice(0)), null, 'the old key is gone after the bound');

  // Messages from x after it left are refused; the departed member gets nothing wrapped.
  assert.deepEqual(await a.ring.receive(x.id, (await x.ring.messagesFor())[0]), { ok: false, reason: 'departed' });
  assert.equal((await a.ring.messagesFor()).flatMap((message) => message.keys).some((entry) => entry.to === x.id), false);
  // A member who never held our key causes no rotation.
  assert.equal(await a.ring.removeMember(memberId(42)), null);
  assert.equal(a.ring.currentKey().id, rotation.keyId);
});

test('a newcomer answers many members in few messages: it gathers who needs its key', async () => {
  const room = [];
  for (let n = 1; n <= 130; n += 1) room.push(await makeMember(n, undefined, []));
  const newcomer = await makeMember(200, undefined, room.map((member) => member.id));
  const [announcement] = await newcomer.ring.announce();
  const needKey = new Set();
  for (const member of room) {
    const result = await member.ring.receive(newcomer.id, announcement);
    assert.deepEqual(result.sendTo, [newcomer.id]);
    for (const reply of await member.ring.messagesFor(result.sendTo)) {
      const answer = await newcomer.ring.receive(member.id, reply);
      assert.equal(answer.ownKey, null, 'no ratchet for members who were there first');
      answer.sendTo.forEach((id) => needKey.add(id));
    }
  }
  const messages = await newcomer.ring.messagesFor([...needKey]);
  assert.equal(messages.length, 3);
  for (const member of room) {
    const results = [];
    for (const message of messages) results.push(await member.ring.receive(newcomer.id, message));
    assert.equal(results.filter((result) => result.installed).length, 1);
    assert.ok(await holdsCurrentKey(member, newcomer));
  }
});

test('calls that overlap run one at a time: one ratchet per newcomer, no wrap of a key being replaced', async () => {
  const [a, b, x] = await joinAll(3);
  const newcomer = await makeMember(4, undefined, [a.id, b.id, x.id]);
  const [announcement] = await newcomer.ring.announce();
  const before = a.ring.currentKey().id;
  const [first, second] = await Promise.all([a.ring.receive(newcomer.id, announcement), a.ring.receive(newcomer.id, announcement)]);
  assert.equal(a.ring.currentKey().id, before + 1, 'one ratchet for one newcomer');
  assert.ok(first.ownKey);
  assert.equal(second.ownKey, null);
  // A wrap asked for just before a rotation carries the key of that moment, whole.
  const [early] = await Promise.all([a.ring.messagesFor([b.id]), a.ring.removeMember(x.id)]);
  const got = await b.ring.receive(a.id, early[0]);
  assert.equal(got.installed?.keyId, before + 1);
  assert.equal(await keyCheck(got.installed.baseKey), await keyCheck(await a.ring.keyOf(a.id, before + 1)));
});
