// Byte helpers the end-to-end encryption modules share (docs/e2ee.md): strict base64, UTF-8, and the length-prefixed
// field encoding every signature, HKDF info and AES-GCM additional data is built from.

export const subtle = globalThis.crypto.subtle;

/** A refusal of the caller's own input (too long a chat text, a malformed argument): says what and why. */
export class E2eeError extends Error {
  constructor(code, detail) {
    super(detail);
    this.code = code;
  }
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function toBase64(bytes) {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let binary = '';
  for (let start = 0; start < view.length; start += 0x8000) {
    binary += String.fromCharCode(...view.subarray(start, start + 0x8000));
  }
  return btoa(binary);
}

/**
 * Standard base64 (padded) to bytes, or null for anything else: a peer's message is never trusted to be well formed.
 * `maxBytes` refuses an oversized value before decoding it.
 */
export function fromBase64(text, maxBytes = Infinity) {
  if (typeof text !== 'string' || text.length % 4 !== 0 || (text.length / 4) * 3 > maxBytes + 2) return null;
  if (!BASE64.test(text)) return null;
  const binary = atob(text);
  if (binary.length > maxBytes) return null;
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: true });

export function utf8(text) {
  return encoder.encode(text);
}

/** UTF-8 bytes to text, or null when they are not valid UTF-8. */
export function fromUtf8(bytes) {
  try {
    return decoder.decode(bytes);
  } catch {
    return null;
  }
}

export function concat(...parts) {
  const total = parts.reduce((sum, part) => sum + part.length, 0);
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * Fields (strings as UTF-8, byte arrays as they are, numbers 0–255 as one byte) each behind a 4-byte big-endian
 * length: no two different field lists encode to the same bytes, so "room A, member BC" can never be read as
 * "room AB, member C" by a signature or a key derivation.
 */
export function encodeFields(...fields) {
  const parts = [];
  for (const field of fields) {
    let bytes;
    if (typeof field === 'string') bytes = utf8(field);
    else if (Number.isInteger(field) && field >= 0 && field <= 255) bytes = Uint8Array.of(field);
    else if (field instanceof Uint8Array) bytes = field;
    else throw new E2eeError('bad-field', `encodeFields: unsupported field ${String(field)}`);
    const length = new Uint8Array(4);
    new DataView(length.buffer).setUint32(0, bytes.length);
    parts.push(length, bytes);
  }
  return concat(...parts);
}

export function bytesEqual(a, b) {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i += 1) difference |= a[i] ^ b[i];
  return difference === 0;
}

/** A member or room id as the server makes them (`MEM-` and 32 hex digits); bounded so a peer cannot bloat state. */
export function isId(value) {
  return typeof value === 'string' && value.length >= 1 && value.length <= 64 && /^[A-Za-z0-9_-]+$/.test(value);
}
