// Sender keys (docs/e2ee.md, "Keys"): 16 random bytes per sender, held as a non-extractable HKDF key from which the
// frame key, the frame IV salt and the chat key are derived under their own labels. A key moves on in two ways:
// a fresh random key on every leave (rotation: the departed member never gets it), and a one-way ratchet on every
// join (ratchet(k) = HKDF(k, "ratchet")): members who held k compute the next key themselves, with no message, while
// the newcomer, given only the ratcheted key, cannot go back to what was said before it joined.
import { subtle, utf8, toBase64 } from './e2ee-bytes.js';

export const SENDER_KEY_BYTES = 16;      // AES-128 strength for everything derived from it
export const MAX_RATCHET_STEPS = 64;     // a receiver derives at most this far ahead; a sender rotates instead
const RATCHET_LABEL = 'parlor e2ee v1 ratchet';
const CHECK_LABEL = 'parlor e2ee v1 key check';

export function importSenderKey(raw) {
  return subtle.importKey('raw', raw, 'HKDF', false, ['deriveKey', 'deriveBits']);
}

/** A fresh sender key: its raw bytes (the sender needs them to wrap for members who join later) and HKDF key. */
export async function generateSenderKey() {
  const raw = crypto.getRandomValues(new Uint8Array(SENDER_KEY_BYTES));
  return { raw, base: await importSenderKey(raw) };
}

/** The next key of the ratchet: {raw, base}. Receivers drop `raw` at once; the sender keeps it to wrap. */
export async function ratchetSenderKey(base) {
  const raw = new Uint8Array(await subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: utf8(RATCHET_LABEL) }, base, SENDER_KEY_BYTES * 8));
  return { raw, base: await importSenderKey(raw) };
}

const ratchets = new WeakMap();  // key → [ratchet(key), ratchet²(key), …] as far as asked

/** The key `steps` (1 to MAX_RATCHET_STEPS) ratchets after `base`, or null; derived once and remembered. */
export async function ratchetForward(base, steps) {
  if (!Number.isInteger(steps) || steps < 1 || steps > MAX_RATCHET_STEPS) return null;
  let chain = ratchets.get(base);
  if (!chain) {
    chain = [];
    ratchets.set(base, chain);
  }
  while (chain.length < steps) {
    const next = await ratchetSenderKey(chain.length ? chain[chain.length - 1] : base);
    next.raw.fill(0);
    chain.push(next.base);
  }
  return chain[steps - 1];
}

/**
 * A short value that tells two sender keys apart without revealing them (HKDF output under its own label), so a key
 * that arrives again (a relayed message repeated) does not reset replay windows. Never sent.
 */
export async function keyCheck(base) {
  const parameters = { name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info: utf8(CHECK_LABEL) };
  const bits = await subtle.deriveBits(parameters, base, 128);
  return toBase64(bits);
}
