// Sender keys, the pairwise wrapping that carries them to each member through the server, and the `e2ee:key`
// message shape (docs/e2ee.md, "Key agreement"). The server relays these messages and cannot read them.
//
// wrap: ECDH P-256 (the sender's ephemeral private key, the recipient's ephemeral public key) → HKDF-SHA-256 (salt:
// the room; info: the room, sender and recipient member ids, the key id and both ephemeral public keys) → an AES-GCM
// key that encrypts the 16-byte sender key under a random IV, with the same info as additional data. A wrapped key
// therefore opens only for that recipient, from that sender, in that room, as that key id.
import { subtle, toBase64, fromBase64, concat, encodeFields, isId } from './e2ee-bytes.js';
import { PUBLIC_KEY_BYTES, SIGNATURE_BYTES } from './e2ee-identity.js';
import { SENDER_KEY_BYTES } from './e2ee-senderkey.js';

export const WRAPPED_BYTES = 12 + SENDER_KEY_BYTES + 16;  // IV | encrypted key | tag
export const MAX_KEYS_PER_MESSAGE = 64;                  // wrapped keys in one e2ee:key message; more are split
export const MAX_KEY_MESSAGE_BYTES = 16384;              // a full message (64 keys, 36-character member ids) is ~9 KiB
export const KEY_MESSAGE_VERSION = 1;

const WRAP_LABEL = 'parlor e2ee v1 key wrap';
const ECDH = { name: 'ECDH', namedCurve: 'P-256' };

/** A room session's ephemeral ECDH key pair: {privateKey (non-extractable), publicRaw (65 bytes)}. */
export async function generateEphemeral() {
  const pair = await subtle.generateKey(ECDH, false, ['deriveBits']);
  return { privateKey: pair.privateKey, publicRaw: new Uint8Array(await subtle.exportKey('raw', pair.publicKey)) };
}

/** The ECDH secret with one member as an HKDF key, or null when its public key is not a P-256 point. */
export async function pairSecret(privateKey, theirPublicRaw) {
  try {
    const publicKey = await subtle.importKey('raw', theirPublicRaw, ECDH, false, []);
    const bits = await subtle.deriveBits({ name: 'ECDH', public: publicKey }, privateKey, 256);
    return await subtle.importKey('raw', bits, 'HKDF', false, ['deriveKey']);
  } catch {
    return null;
  }
}

function wrapContext({ roomId, fromId, toId, keyId, fromPublicRaw, toPublicRaw }) {
  return {
    salt: encodeFields(WRAP_LABEL, roomId),
    info: encodeFields(WRAP_LABEL, roomId, fromId, toId, keyId, fromPublicRaw, toPublicRaw),
  };
}

async function wrappingKey(secret, context, usage) {
  return subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: context.salt, info: context.info },
    secret, { name: 'AES-GCM', length: 128 }, false, [usage]);
}

/** The sender key's raw bytes wrapped for one recipient (base64 of WRAPPED_BYTES). `secret`: pairSecret(). */
export async function wrapSenderKey({ secret, raw, ...names }) {
  const context = wrapContext(names);
  const key = await wrappingKey(secret, context, 'encrypt');
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: context.info }, key, raw);
  return toBase64(concat(iv, new Uint8Array(sealed)));
}

/**
 * The sender key (a non-extractable HKDF CryptoKey: its bytes never reach JavaScript here) or null: wrong recipient,
 * sender, room, key id or public keys, or tampered bytes all fail the GCM tag.
 */
export async function unwrapSenderKey({ secret, wrapped, ...names }) {
  if (!(wrapped instanceof Uint8Array) || wrapped.length !== WRAPPED_BYTES) return null;
  const context = wrapContext(names);
  try {
    const key = await wrappingKey(secret, context, 'unwrapKey');
    return await subtle.unwrapKey('raw', wrapped.subarray(12), key,
      { name: 'AES-GCM', iv: wrapped.subarray(0, 12), additionalData: context.info },
      'HKDF', false, ['deriveKey', 'deriveBits']);
  } catch {
    return null;
  }
}

function isPoint(bytes) {
  return bytes !== null && bytes.length === PUBLIC_KEY_BYTES && bytes[0] === 0x04;
}

/**
 * An `e2ee:key` body checked for shape only (signature and unwrapping come after), or null:
 * {publicRaw, identityRaw, identityKey (base64), signature (base64), keys: [{to, keyId, wrapped (bytes)}]}.
 */
export function parseKeyMessage(body) {
  if (!body || typeof body !== 'object' || body.v !== KEY_MESSAGE_VERSION) return null;
  const publicRaw = fromBase64(body.public_key, PUBLIC_KEY_BYTES);
  const identityRaw = fromBase64(body.identity_key, PUBLIC_KEY_BYTES);
  const signature = fromBase64(body.signature, SIGNATURE_BYTES);
  if (!isPoint(publicRaw) || !isPoint(identityRaw) || !signature || signature.length !== SIGNATURE_BYTES) return null;
  if (!Array.isArray(body.keys) || body.keys.length > MAX_KEYS_PER_MESSAGE) return null;
  const keys = [];
  for (const entry of body.keys) {
    if (!entry || typeof entry !== 'object' || !isId(entry.to)) return null;
    if (!Number.isInteger(entry.key_id) || entry.key_id < 0 || entry.key_id > 255) return null;
    const wrapped = fromBase64(entry.wrapped, WRAPPED_BYTES);
    if (!wrapped || wrapped.length !== WRAPPED_BYTES) return null;
    keys.push({ to: entry.to, keyId: entry.key_id, wrapped });
  }
  return { publicRaw, identityRaw, identityKey: body.identity_key, signature: body.signature, keys };
}

/**
 * `e2ee:key` bodies carrying `entries` ({to, key_id, wrapped}), MAX_KEYS_PER_MESSAGE to a message; with no entries one
 * message that only announces the public key. `header`: {cid, public_key, identity_key, signature}.
 */
export function keyMessages(header, entries) {
  const messages = [];
  for (let start = 0; start === 0 || start < entries.length; start += MAX_KEYS_PER_MESSAGE) {
    messages.push({ ...header, v: KEY_MESSAGE_VERSION, keys: entries.slice(start, start + MAX_KEYS_PER_MESSAGE) });
  }
  return messages;
}
