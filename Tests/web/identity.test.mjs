// Identity keys, their signatures over ephemeral keys, safety codes and the IdentityBook.
import './webcrypto.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MemoryStore, openStore, loadOrCreateIdentity, signEphemeral, verifyEphemeral, safetyCode, IdentityBook, SAFETY_GROUPS,
} from '../../Sources/ParlorApp/Web/e2ee-identity.js';
import { generateEphemeral } from '../../Sources/ParlorApp/Web/e2ee-wrap.js';
import { fromBase64, toBase64 } from '../../Sources/ParlorApp/Web/e2ee-bytes.js';
import { ROOM, memberId } from './support.mjs';

test('the identity is made once per store and label, with a private key that cannot be exported', async () => {
  const store = new MemoryStore();
  const first = await loadOrCreateIdentity(store, 'alice');
  const again = await loadOrCreateIdentity(store, 'alice');
  assert.equal(again.publicBase64, first.publicBase64, 'loaded, not made again (a reload)');
  assert.equal(first.privateKey.extractable, false);
  await assert.rejects(crypto.subtle.exportKey('pkcs8', first.privateKey));
  assert.equal(first.publicRaw.length, 65);
  assert.notEqual((await loadOrCreateIdentity(store, 'bob')).publicBase64, first.publicBase64);
  assert.notEqual((await loadOrCreateIdentity(new MemoryStore(), 'alice')).publicBase64, first.publicBase64);
  // Node has no IndexedDB: the fallback is memory, and says so.
  assert.equal((await openStore()).persistent, false);
});

test('a signature over an ephemeral key verifies for exactly that room, member and key', async () => {
  const identity = await loadOrCreateIdentity(new MemoryStore(), 'alice');
  const other = await loadOrCreateIdentity(new MemoryStore(), 'mallory');
  const { publicRaw } = await generateEphemeral();
  const { publicRaw: otherRaw } = await generateEphemeral();
  const claim = { roomId: ROOM, memberId: memberId(1), ephemeralPublicRaw: publicRaw };
  const signature = await signEphemeral(identity, claim);
  assert.equal(await verifyEphemeral(identity.publicRaw, signature, claim), true);
  assert.equal(await verifyEphemeral(other.publicRaw, signature, claim), false, 'another identity');
  assert.equal(await verifyEphemeral(identity.publicRaw, signature, { ...claim, roomId: 'RM-2' }), false, 'another room');
  assert.equal(await verifyEphemeral(identity.publicRaw, signature, { ...claim, memberId: memberId(2) }), false, 'another member');
  assert.equal(await verifyEphemeral(identity.publicRaw, signature, { ...claim, ephemeralPublicRaw: otherRaw }), false, 'another key');
  const tampered = fromBase64(signature);
  tampered[10] ^= 1;
  assert.equal(await verifyEphemeral(identity.publicRaw, toBase64(tampered), claim), false, 'tampered');
  assert.equal(await verifyEphemeral(identity.publicRaw, 'AAAA', claim), false, 'short');
  assert.equal(await verifyEphemeral(new Uint8Array(65), signature, claim), false, 'not a point');
  await assert.rejects(signEphemeral(identity, { ...claim, memberId: '' }), (error) => error.code === 'bad-id');
});

test('a safety code is stable for a key, differs between keys, and has the documented shape', async () => {
  const store = new MemoryStore();
  const identity = await loadOrCreateIdentity(store, 'alice');
  const code = await safetyCode(identity.publicRaw);
  assert.match(code, new RegExp(`^\\d{5}( \\d{5}){${SAFETY_GROUPS - 1}}$`));
  assert.equal(await safetyCode((await loadOrCreateIdentity(store, 'alice')).publicRaw), code, 'the same after a reload');
  assert.notEqual(await safetyCode((await loadOrCreateIdentity(store, 'bob')).publicRaw), code);
  // A known vector, so the derivation cannot change silently (every client must show the same code).
  const fixed = new Uint8Array(65).fill(7);
  fixed[0] = 4;
  assert.equal(await safetyCode(fixed), await safetyCode(Uint8Array.from(fixed)));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-512', new Uint8Array([
    0, 0, 0, 26, ...new TextEncoder().encode('parlor e2ee v1 safety code'), 0, 0, 0, 65, ...fixed])));
  let first = 0;
  for (const byte of digest.subarray(0, 5)) first = first * 256 + byte;
  assert.equal((await safetyCode(fixed)).slice(0, 5), String(first % 100000).padStart(5, '0'));
});

test('the IdentityBook reports a new user, a known key, and a change until it is accepted', async () => {
  const store = new MemoryStore();
  const book = new IdentityBook(store);
  const first = await loadOrCreateIdentity(new MemoryStore(), 'carol');
  const second = await loadOrCreateIdentity(new MemoryStore(), 'carol-on-another-device');
  assert.deepEqual(await book.observe('USR-carol', first.publicBase64), { status: 'new' });
  assert.deepEqual(await book.observe('USR-carol', first.publicBase64), { status: 'known' });
  // Remembered in the store: another book over it (a reload) knows carol.
  assert.deepEqual(await new IdentityBook(store).observe('USR-carol', first.publicBase64), { status: 'known' });
  const changed = await book.observe('USR-carol', second.publicBase64);
  assert.deepEqual(changed, { status: 'changed', previous: first.publicBase64, current: second.publicBase64 });
  assert.equal((await book.observe('USR-carol', second.publicBase64)).status, 'changed', 'still, until accepted');
  await book.accept('USR-carol', second.publicBase64);
  assert.deepEqual(await book.observe('USR-carol', second.publicBase64), { status: 'known' });
  assert.equal((await book.observe('USR-carol', first.publicBase64)).status, 'changed');
  await assert.rejects(book.observe('USR-carol', 'AAAA'), (error) => error.code === 'bad-identity');
});
