// Chat in an encrypted room (docs/e2ee.md, "Chat"): `message:send` carries `ciphertext` instead of `text`.
//
// ciphertext = base64( version 1 (1) | key id (1) | IV (12, random) | AES-GCM-128 of the padded text | tag (16) )
//
// The key is the sender's current sender key through HKDF under a chat label, so chat never shares a key or an IV
// space with audio frames. Random IVs are safe here: chat is rate-limited to a few messages a second, far below the
// 2^32 messages per key that random 96-bit IVs allow. The additional data names the room, the sender's member id and
// the key id, so a ciphertext cannot be replayed as another member's or into another room. The text is padded to a
// multiple of 32 bytes (0x80 then zeros) so the length shows less of what was said.
import { subtle, E2eeError, utf8, fromUtf8, concat, toBase64, fromBase64, encodeFields } from './e2ee-bytes.js';

export const CHAT_VERSION = 1;
export const MAX_CHAT_CIPHERTEXT_CHARS = 8192;  // the server's limit on `ciphertext` (base64 characters)
const PAD_BLOCK = 32;
const OVERHEAD = 2 + 12 + 16;
// The padded text must fit: 8192 base64 characters are 6144 bytes.
const MAX_SEALED_BYTES = (MAX_CHAT_CIPHERTEXT_CHARS / 4) * 3;
export const MAX_CHAT_TEXT_BYTES = Math.floor((MAX_SEALED_BYTES - OVERHEAD) / PAD_BLOCK) * PAD_BLOCK - 1;  // 6111

const CHAT_KEY_LABEL = 'parlor e2ee v1 chat key';
const CHAT_AAD_LABEL = 'parlor e2ee v1 chat';
const chatKeys = new WeakMap();  // sender key → its chat key

async function chatKey(baseKey) {
  let key = chatKeys.get(baseKey);
  if (!key) {
    key = await subtle.deriveKey(
      { name: 'HKDF', hash: 'SHA-256', salt: utf8('parlor e2ee v1 sender key'), info: utf8(CHAT_KEY_LABEL) },
      baseKey, { name: 'AES-GCM', length: 128 }, false, ['encrypt', 'decrypt']);
    chatKeys.set(baseKey, key);
  }
  return key;
}

function pad(bytes) {
  const padded = new Uint8Array(Math.ceil((bytes.length + 1) / PAD_BLOCK) * PAD_BLOCK);
  padded.set(bytes);
  padded[bytes.length] = 0x80;
  return padded;
}

function unpad(bytes) {
  let end = bytes.length - 1;
  while (end >= 0 && bytes[end] === 0) end -= 1;
  return end >= 0 && bytes[end] === 0x80 ? bytes.subarray(0, end) : null;
}

/** `text` encrypted with our current sender key (a KeyRing's): the `ciphertext` of message:send. */
export async function encryptChat(ring, text) {
  if (typeof text !== 'string' || text.length === 0) throw new E2eeError('chat-empty', 'The message is empty.');
  const plain = utf8(text);
  if (plain.length > MAX_CHAT_TEXT_BYTES) {
    throw new E2eeError('chat-too-long',
      `The message is ${plain.length} bytes; an encrypted message holds at most ${MAX_CHAT_TEXT_BYTES} bytes of text.`);
  }
  const { id, baseKey } = ring.currentKey();
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const additionalData = encodeFields(CHAT_AAD_LABEL, ring.roomId, ring.memberId, id);
  const sealed = await subtle.encrypt({ name: 'AES-GCM', iv, additionalData }, await chatKey(baseKey), pad(plain));
  return toBase64(concat(Uint8Array.of(CHAT_VERSION, id), iv, new Uint8Array(sealed)));
}

/**
 * The text of a `message:text` event's `ciphertext` from `fromMemberId`, or null: unreadable (a key we never held —
 * sent before we joined, or before a reload), tampered, or not this format. Never throws.
 */
export async function decryptChat(ring, fromMemberId, ciphertext) {
  if (typeof ciphertext !== 'string' || ciphertext.length > MAX_CHAT_CIPHERTEXT_CHARS) return null;
  const bytes = fromBase64(ciphertext);
  if (!bytes || bytes.length < OVERHEAD + PAD_BLOCK || bytes[0] !== CHAT_VERSION) return null;
  const baseKey = await ring.keyOf(fromMemberId, bytes[1]);
  if (!baseKey) return null;
  const additionalData = encodeFields(CHAT_AAD_LABEL, ring.roomId, fromMemberId, bytes[1]);
  try {
    const plain = await subtle.decrypt({ name: 'AES-GCM', iv: bytes.subarray(2, 14), additionalData },
      await chatKey(baseKey), bytes.subarray(14));
    const unpadded = unpad(new Uint8Array(plain));
    return unpadded ? fromUtf8(unpadded) : null;
  } catch {
    return null;
  }
}
