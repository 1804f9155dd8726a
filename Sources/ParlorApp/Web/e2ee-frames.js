// Audio frame encryption for encrypted rooms (docs/e2ee.md, "Frame format"). Each sender encrypts every Opus frame
// whole with its own current sender key; receivers decrypt per sender. Nothing here throws into the media pipeline:
// a frame that cannot be encrypted or decrypted becomes null and the transform drops it.
//
// An encrypted frame is
//
//     AES-GCM-128 ciphertext of the Opus frame (same length) | GCM tag (16) | counter (8, big-endian) | key id (1)
//
// IV (96 bits) = the key's 12-byte IV salt XOR (4 zero bytes | counter). The additional data is the 9-byte trailer,
// so neither the counter nor the key id can be changed without the tag failing.
//
// Why this IV is unique: every sender key belongs to exactly one sender (nobody else encrypts with it), and the frame
// key and IV salt are derived from it with their own HKDF labels, so other senders and chat never share its IV space;
// within one key only the counter varies. The counter never repeats under one key because each FrameEncryptor starts
// it from the wall clock (milliseconds << 20, above any value an encryptor started earlier could have reached unless
// it sent a million frames a millisecond) and never below the last start in this realm; a renegotiation that makes a
// new encryptor (a new worker, a new connection) for the same key thus cannot reuse an IV, and receivers see the
// counter only go up, which the replay window needs.
import { subtle, utf8, concat } from './e2ee-bytes.js';
import { keyCheck, ratchetForward } from './e2ee-senderkey.js';

export const TAG_BYTES = 16;
export const COUNTER_BYTES = 8;
export const TRAILER_BYTES = COUNTER_BYTES + 1;
export const MAX_FRAME_BYTES = 8192;          // an Opus packet is at most 120 ms × 1275 bytes; more is not ours
export const REPLAY_WINDOW = 256;             // counters this far behind the newest are still accepted once
export const PREVIOUS_KEY_GRACE_MS = 2000;    // a replaced key still decrypts frames in flight for this long

const FRAME_KEY_LABEL = 'parlor e2ee v1 audio frame key';
const FRAME_SALT_LABEL = 'parlor e2ee v1 audio frame iv salt';
const HKDF_SALT = utf8('parlor e2ee v1 sender key');

/** The AES-GCM frame key and IV salt of a sender key (an HKDF CryptoKey): both non-extractable or plain salt bytes. */
export async function deriveFrameKey(baseKey) {
  const key = await subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: HKDF_SALT, info: utf8(FRAME_KEY_LABEL) },
    baseKey, { name: 'AES-GCM', length: 128 }, false, ['encrypt', 'decrypt']);
  const salt = new Uint8Array(await subtle.deriveBits(
    { name: 'HKDF', hash: 'SHA-256', salt: HKDF_SALT, info: utf8(FRAME_SALT_LABEL) }, baseKey, 96));
  return { key, salt };
}

function frameIv(salt, counter) {
  const iv = Uint8Array.from(salt);
  const view = new DataView(iv.buffer);
  view.setBigUint64(4, view.getBigUint64(4) ^ counter);
  return iv;
}

function trailer(counter, keyId) {
  const bytes = new Uint8Array(TRAILER_BYTES);
  new DataView(bytes.buffer).setBigUint64(0, counter);
  bytes[COUNTER_BYTES] = keyId;
  return bytes;
}

/** The counter and key id of an encrypted frame, without decrypting it (null when it is too short to be one). */
export function readTrailer(data) {
  const bytes = new Uint8Array(data);
  if (bytes.length < TAG_BYTES + TRAILER_BYTES) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset + bytes.length - TRAILER_BYTES, TRAILER_BYTES);
  return { counter: view.getBigUint64(0), keyId: view.getUint8(COUNTER_BYTES) };
}

let lastCounterStart = 0n;
const MAX_COUNTER = (1n << 64n) - 1n;

function counterStart(nowMs) {
  const fromClock = BigInt(Math.floor(nowMs)) << 20n;
  lastCounterStart = fromClock > lastCounterStart ? fromClock : lastCounterStart + (1n << 20n);
  return lastCounterStart;
}

/** One sender's side: encrypts with the current sender key. */
export class FrameEncryptor {
  constructor({ wallClock = () => Date.now() } = {}) {
    this.current = null;  // {id, key, salt}
    this.counter = counterStart(wallClock());
  }

  /** Switches to a sender key (id 0–255, an HKDF CryptoKey): frames encrypted after this use it. */
  async setKey(keyId, baseKey) {
    const { key, salt } = await deriveFrameKey(baseKey);
    this.current = { id: keyId, key, salt };
  }

  /** The encrypted frame (an ArrayBuffer), or null: no key yet, too large a frame, or the counter ran out. */
  async encrypt(data) {
    const current = this.current;
    if (!current || data.byteLength > MAX_FRAME_BYTES || this.counter >= MAX_COUNTER) return null;
    const counter = this.counter;
    this.counter += 1n;
    const additionalData = trailer(counter, current.id);
    try {
      const sealed = await subtle.encrypt({ name: 'AES-GCM', iv: frameIv(current.salt, counter), additionalData },
        current.key, data);
      return concat(new Uint8Array(sealed), additionalData).buffer;
    } catch {
      return null;
    }
  }
}

/**
 * The counters one key has accepted: the newest and a bitmap of the REPLAY_WINDOW before it. A counter is taken only
 * after its frame decrypted, so forged frames cannot use up counters.
 */
export class ReplayWindow {
  constructor() {
    this.newest = -1n;
    this.seen = 0n;  // bit i: newest - i was accepted
  }

  /** Whether a counter would be fresh: ahead of the newest, or within the window and not seen yet. */
  fresh(counter) {
    if (counter > this.newest) return true;
    const behind = this.newest - counter;
    if (behind >= BigInt(REPLAY_WINDOW)) return false;
    return ((this.seen >> behind) & 1n) === 0n;
  }

  accept(counter) {
    const mask = (1n << BigInt(REPLAY_WINDOW)) - 1n;
    if (counter > this.newest) {
      const ahead = this.newest < 0n ? BigInt(REPLAY_WINDOW) : counter - this.newest;
      this.seen = ahead >= BigInt(REPLAY_WINDOW) ? 1n : ((this.seen << ahead) | 1n) & mask;
      this.newest = counter;
    } else {
      this.seen |= 1n << (this.newest - counter);
    }
  }
}

/**
 * One sender's frames as a receiver sees them: its current key and the previous one (a rotation in flight, for
 * PREVIOUS_KEY_GRACE_MS after the current one was replaced), each with its own replay window. A frame under a key id
 * up to MAX_RATCHET_STEPS ahead of the current one is tried with the ratcheted key (the sender ratchets when someone
 * joins, without a message); when it decrypts, that key becomes current.
 */
export class FrameDecryptor {
  constructor({ now = () => performance.now(), previousKeyGraceMs = PREVIOUS_KEY_GRACE_MS } = {}) {
    this.now = now;
    this.graceMs = previousKeyGraceMs;
    this.current = null;   // {id, base, check, key, salt, replay}
    this.previous = null;  // the same and `until`: the time it stops decrypting
    this.ahead = new Map();  // key id → entry ratcheted from the current key, made when a frame asked for it
  }

  async entry(id, base, check = null) {
    const { key, salt } = await deriveFrameKey(base);
    return { id, base, check, key, salt, replay: new ReplayWindow() };
  }

  /**
   * A sender key that arrived wrapped becomes current; the one it replaces decrypts frames in flight for a while. The
   * same key again (a repeated message) changes nothing, so its replay window is not reset.
   */
  async setKey(keyId, baseKey) {
    const check = await keyCheck(baseKey);
    if (this.current?.id === keyId && this.current.check === check) return;
    this.promote(await this.entry(keyId, baseKey, check));
  }

  promote(entry) {
    const replaced = this.current;
    this.current = entry;
    this.ahead = new Map();
    this.previous = replaced && replaced.id !== entry.id ? { ...replaced, until: this.now() + this.graceMs } : null;
  }

  /** Forgets every key of this sender (it left): nothing of it decrypts any more. */
  clear() {
    this.current = null;
    this.previous = null;
    this.ahead = new Map();
  }

  async keyFor(keyId) {
    const current = this.current;
    if (current?.id === keyId) return current;
    const previous = this.previous;
    if (previous?.id === keyId) {
      if (this.now() <= previous.until) return previous;
      this.previous = null;
      return null;
    }
    if (!current) return null;
    let entry = this.ahead.get(keyId);
    if (!entry) {
      const base = await ratchetForward(current.base, (keyId - current.id) & 0xff);
      if (!base || this.current !== current) return null;
      // With its check, so the same key arriving wrapped later (setKey) is recognised and keeps its replay window.
      const made = await this.entry(keyId, base, await keyCheck(base));
      if (this.current !== current) return null;
      entry = this.ahead.get(keyId) || made;  // another frame may have made it meanwhile: one replay window per key
      this.ahead.set(keyId, entry);
    }
    return entry;
  }

  /** The Opus frame (an ArrayBuffer), or null: unknown key id, tampered, replayed or too old, malformed. */
  async decrypt(data) {
    if (!(data instanceof ArrayBuffer) || data.byteLength > MAX_FRAME_BYTES + TAG_BYTES + TRAILER_BYTES) return null;
    const header = readTrailer(data);
    if (!header) return null;
    const entry = await this.keyFor(header.keyId);
    if (!entry || !entry.replay.fresh(header.counter)) return null;
    const bytes = new Uint8Array(data);
    const additionalData = bytes.subarray(bytes.length - TRAILER_BYTES);
    let plain;
    try {
      plain = await subtle.decrypt({ name: 'AES-GCM', iv: frameIv(entry.salt, header.counter), additionalData },
        entry.key, bytes.subarray(0, bytes.length - TRAILER_BYTES));
    } catch {
      return null;
    }
    if (!entry.replay.fresh(header.counter)) return null;  // the same frame twice, both awaiting decrypt
    entry.replay.accept(header.counter);
    if (this.ahead.get(entry.id) === entry) this.promote(entry);  // the sender has ratcheted: follow it
    return plain;
  }
}

/**
 * The per-frame step of both encoded-transform APIs: `crypt(ArrayBuffer)` → ArrayBuffer or null. Returns the frame
 * with its data replaced, or null to drop it. `enabled()` false passes frames through unchanged (the test hook that
 * shows received frames really are encrypted).
 */
export function frameTransform(crypt, enabled = () => true) {
  return async (frame) => {
    if (!enabled()) return frame;
    let data = null;
    try {
      data = await crypt(frame.data);
    } catch {
      data = null;
    }
    if (!data) return null;
    frame.data = data;
    return frame;
  };
}

/**
 * Pipes encoded frames through `transform` (frameTransform): the same code for RTCRtpScriptTransform's
 * `transformer.readable/writable` in the worker and for createEncodedStreams' streams posted to it.
 */
export function pipeFrames(readable, writable, transform) {
  return readable
    .pipeThrough(new TransformStream({
      async transform(frame, controller) {
        const out = await transform(frame);
        if (out) controller.enqueue(out);
      },
    }))
    .pipeTo(writable)
    .catch(() => {});  // the connection closed: the streams end with it
}
