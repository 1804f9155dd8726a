// Knowing who you talk to in an encrypted room (docs/e2ee.md, "Identity and safety codes"): a long-lived ECDSA P-256
// identity key per browser (the private half non-extractable, kept in IndexedDB so it survives reloads) signs each
// room session's ephemeral ECDH key; a safety code derived from the identity public key is what members compare out
// of band; the IdentityBook remembers each user's identity key and reports when it changes.
import { subtle, E2eeError, toBase64, fromBase64, encodeFields, bytesEqual, isId } from './e2ee-bytes.js';

export const PUBLIC_KEY_BYTES = 65;   // an uncompressed P-256 point
export const SIGNATURE_BYTES = 64;    // ECDSA P-256 r | s (WebCrypto's format)
const SIGNED_LABEL = 'parlor e2ee v1 ephemeral key';
const SAFETY_LABEL = 'parlor e2ee v1 safety code';
const ECDSA = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGN = { name: 'ECDSA', hash: 'SHA-256' };

/** A Map-like store for the Node tests and for browsers without IndexedDB (private windows): nothing survives. */
export class MemoryStore {
  constructor() { this.map = new Map(); }
  async get(key) { return this.map.get(key); }
  async put(key, value) { this.map.set(key, value); }
  get persistent() { return false; }
}

/** IndexedDB: CryptoKeys are stored by structured clone, so a non-extractable private key persists as it is. */
export class IndexedDbStore {
  static open(name = 'parlor-e2ee') {
    return new Promise((resolve, reject) => {
      const request = globalThis.indexedDB.open(name, 1);
      request.onupgradeneeded = () => request.result.createObjectStore('kv');
      request.onsuccess = () => resolve(new IndexedDbStore(request.result));
      request.onerror = () => reject(request.error);
    });
  }

  constructor(db) { this.db = db; }
  get persistent() { return true; }

  run(mode, action) {
    return new Promise((resolve, reject) => {
      const request = action(this.db.transaction('kv', mode).objectStore('kv'));
      request.onsuccess = () => resolve(request.result);
      request.onerror = () => reject(request.error);
    });
  }

  get(key) { return this.run('readonly', (store) => store.get(key)); }
  put(key, value) { return this.run('readwrite', (store) => store.put(value, key)); }
}

/** IndexedDB where there is one that opens, else memory (the caller can tell by `store.persistent`). */
export async function openStore() {
  if (globalThis.indexedDB) {
    try {
      return await IndexedDbStore.open();
    } catch {
      // a private window or a blocked database: keys for this page's life only
    }
  }
  return new MemoryStore();
}

/**
 * This browser's identity for `label` (say, the server origin and user id): loaded from the store, or made and
 * stored on first use. {privateKey (non-extractable), publicKey, publicRaw (65 bytes), publicBase64}.
 */
export async function loadOrCreateIdentity(store, label) {
  const key = `identity:${label}`;
  const stored = await store.get(key);
  if (stored?.privateKey && stored?.publicKey) return identityFrom(stored.privateKey, stored.publicKey);
  const pair = await subtle.generateKey(ECDSA, false, ['sign', 'verify']);
  await store.put(key, { privateKey: pair.privateKey, publicKey: pair.publicKey });
  return identityFrom(pair.privateKey, pair.publicKey);
}

async function identityFrom(privateKey, publicKey) {
  const publicRaw = new Uint8Array(await subtle.exportKey('raw', publicKey));
  return { privateKey, publicKey, publicRaw, publicBase64: toBase64(publicRaw) };
}

function signedData(roomId, memberId, ephemeralPublicRaw) {
  return encodeFields(SIGNED_LABEL, roomId, memberId, ephemeralPublicRaw);
}

/** The identity's signature (base64) over a room session's ephemeral public key, the room id and the member id. */
export async function signEphemeral(identity, { roomId, memberId, ephemeralPublicRaw }) {
  if (!isId(roomId) || !isId(memberId)) {
    throw new E2eeError('bad-id', 'signEphemeral: a room id and a member id are required');
  }
  return toBase64(await subtle.sign(SIGN, identity.privateKey, signedData(roomId, memberId, ephemeralPublicRaw)));
}

/** Whether `signature` (base64) is the identity key's (raw bytes) over exactly this room, member and key. */
export async function verifyEphemeral(identityPublicRaw, signature, { roomId, memberId, ephemeralPublicRaw }) {
  const signatureBytes = fromBase64(signature, SIGNATURE_BYTES);
  if (!signatureBytes || signatureBytes.length !== SIGNATURE_BYTES) return false;
  if (!(identityPublicRaw instanceof Uint8Array) || identityPublicRaw.length !== PUBLIC_KEY_BYTES) return false;
  try {
    const publicKey = await subtle.importKey('raw', identityPublicRaw, ECDSA, false, ['verify']);
    return await subtle.verify(SIGN, publicKey, signatureBytes, signedData(roomId, memberId, ephemeralPublicRaw));
  } catch {
    return false;  // not a point on the curve
  }
}

export const SAFETY_GROUPS = 6;

/**
 * A member's safety code: SAFETY_GROUPS groups of 5 digits, each 5 bytes of SHA-512(label | identity key) mod
 * 100000. Digits read aloud in any language and compare at a glance; 6 groups carry ~99.7 bits, so making another
 * identity key with the same code (a second preimage) costs ~2^99 key derivations: out of reach, with no stretching
 * needed. It depends on the identity public key only, so it is the same in every room and after every reload.
 */
export async function safetyCode(identityPublicRaw) {
  const digest = new Uint8Array(await subtle.digest('SHA-512', encodeFields(SAFETY_LABEL, identityPublicRaw)));
  const groups = [];
  for (let group = 0; group < SAFETY_GROUPS; group += 1) {
    let value = 0;
    for (const byte of digest.subarray(group * 5, group * 5 + 5)) value = value * 256 + byte;  // < 2^40: exact
    groups.push(String(value % 100000).padStart(5, '0'));
  }
  return groups.join(' ');
}

/**
 * What this browser has seen of each user's identity key (trust on first use, remembered in the store). `observe`
 * says whether a key is new, known, or changed; a changed key stays reported as changed until `accept` takes it, so a
 * warning cannot be dismissed by simply reconnecting.
 */
export class IdentityBook {
  constructor(store) { this.store = store; }

  /** 'new' (first time: remembered now), 'known', or 'changed' ({status, previous, current}: base64 keys). */
  async observe(userId, identityKeyBase64) {
    const current = fromBase64(identityKeyBase64, PUBLIC_KEY_BYTES);
    if (!isId(userId) || !current || current.length !== PUBLIC_KEY_BYTES) {
      throw new E2eeError('bad-identity', 'IdentityBook.observe: a user id and a 65-byte identity key are required');
    }
    const entry = await this.store.get(`book:${userId}`);
    if (!entry) {
      await this.store.put(`book:${userId}`, { identityKey: identityKeyBase64, firstSeen: Date.now() });
      return { status: 'new' };
    }
    if (bytesEqual(fromBase64(entry.identityKey), current)) return { status: 'known' };
    return { status: 'changed', previous: entry.identityKey, current: identityKeyBase64 };
  }

  /** The user said the new key is right (they compared safety codes): remembered from now on. */
  async accept(userId, identityKeyBase64) {
    await this.store.put(`book:${userId}`, { identityKey: identityKeyBase64, firstSeen: Date.now() });
  }
}
