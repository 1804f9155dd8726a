// Encrypted chat: the ciphertext of message:send, readable by whoever held the sender's key, unreadable otherwise.
import './webcrypto.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encryptChat, decryptChat, MAX_CHAT_CIPHERTEXT_CHARS, MAX_CHAT_TEXT_BYTES } from '../../Sources/ParlorApp/Web/e2ee-chat.js';
import { fromBase64, toBase64 } from '../../Sources/ParlorApp/Web/e2ee-bytes.js';
import { makeMember, relay, joinAll } from './support.mjs';

test('a chat message round-trips for every member, the sender included', async () => {
  const [a, b, c] = await joinAll(3);
  const text = 'Hello everyone — ça va? 👋\nsecond line';
  const ciphertext = await encryptChat(a.ring, text);
  assert.ok(!ciphertext.includes('Hello'));
  assert.equal(fromBase64(ciphertext)[0], 1, 'version byte');
  for (const member of [a, b, c]) assert.equal(await decryptChat(member.ring, a.id, ciphertext), text, member.id);
  // Two encryptions of the same text differ (random IV), and the length only shows the 32-byte padded size.
  assert.notEqual(await encryptChat(a.ring, text), ciphertext);
  assert.equal((await encryptChat(a.ring, 'a')).length, (await encryptChat(a.ring, 'a'.repeat(31))).length);
});

test('a late joiner sees earlier messages as unreadable, later ones as text; a leaver cannot read what follows', async () => {
  const room = await joinAll(2);
  const [a, b] = room;
  const before = await encryptChat(a.ring, 'before you came');
  const [, , x] = await joinAll(1, undefined, room);
  const after = await encryptChat(a.ring, 'welcome');
  assert.equal(await decryptChat(x.ring, a.id, before), null, 'sent under a key x never held');
  assert.equal(await decryptChat(x.ring, a.id, after), 'welcome');
  // b follows a's ratchet without a message, and reads both; a reads its own.
  assert.equal(await decryptChat(b.ring, a.id, before), 'before you came');
  assert.equal(await decryptChat(b.ring, a.id, after), 'welcome');
  assert.equal(await decryptChat(a.ring, a.id, before), 'before you came');
  // x leaves: b's fresh key reaches a, never x.
  const rotation = await b.ring.removeMember(x.id);
  await a.ring.receive(b.id, rotation.messages[0]);
  const secret = await encryptChat(b.ring, 'after x left');
  assert.equal(await decryptChat(x.ring, b.id, secret), null);
  assert.equal(await decryptChat(a.ring, b.id, secret), 'after x left');
  // A new session of a reader (a reload) holds no key of before.
  const reloaded = await makeMember(9);
  assert.equal(await decryptChat(reloaded.ring, a.id, after), null);
});

test('a ciphertext moved to another sender, room, or changed in any byte is unreadable', async () => {
  const [a, b] = await joinAll(2);
  const ciphertext = await encryptChat(a.ring, 'only from a');
  assert.equal(await decryptChat(b.ring, b.id, ciphertext), null, 'claimed as b\'s');
  const bytes = fromBase64(ciphertext);
  for (let i = 0; i < bytes.length; i += 1) {
    const tampered = Uint8Array.from(bytes);
    tampered[i] ^= 0x01;
    assert.equal(await decryptChat(b.ring, a.id, toBase64(tampered)), null, `byte ${i}`);
  }
  for (const bad of [undefined, '', 'not base64', 'A'.repeat(MAX_CHAT_CIPHERTEXT_CHARS + 4), toBase64(new Uint8Array(10))]) {
    assert.equal(await decryptChat(b.ring, a.id, bad), null);
  }
  assert.equal(await decryptChat(b.ring, a.id, ciphertext), 'only from a', 'the original reads');
});

test('the longest text fits the 8 KiB ciphertext limit; a longer one is refused with a clear error', async () => {
  const [a, b] = await joinAll(2);
  const longest = 'é'.repeat(Math.floor(MAX_CHAT_TEXT_BYTES / 2)) + (MAX_CHAT_TEXT_BYTES % 2 ? 'x' : '');
  const ciphertext = await encryptChat(a.ring, longest);
  assert.ok(ciphertext.length <= MAX_CHAT_CIPHERTEXT_CHARS, `${ciphertext.length}`);
  assert.equal(await decryptChat(b.ring, a.id, ciphertext), longest);
  await assert.rejects(encryptChat(a.ring, `${longest}x`), (error) => error.code === 'chat-too-long' && /at most 6111 bytes/.test(error.message));
  await assert.rejects(encryptChat(a.ring, ''), (error) => error.code === 'chat-empty');
});
