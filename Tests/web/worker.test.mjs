// e2ee-worker.js as a worker runs it: its message handler and rtctransform handler on `self`, fed real streams of
// {data} frames (what RTCRtpScriptTransform's transformer and createEncodedStreams hand over are such streams).
import './webcrypto.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateSenderKey } from '../../Sources/ParlorApp/Web/e2ee-senderkey.js';
import { FrameDecryptor, FrameEncryptor, TAG_BYTES, TRAILER_BYTES } from '../../Sources/ParlorApp/Web/e2ee-frames.js';

globalThis.self = {};
await import('../../Sources/ParlorApp/Web/e2ee-worker.js');
const worker = globalThis.self;

function frames(buffers) {
  return new ReadableStream({ start(controller) { for (const data of buffers) controller.enqueue({ data }); controller.close(); } });
}

function collector() {
  const out = [];
  let done;
  const finished = new Promise((resolve) => { done = resolve; });
  const writable = new WritableStream({ write(frame) { out.push(new Uint8Array(frame.data)); }, close() { done(); } });
  return { out, writable, finished };
}

// Key messages are applied asynchronously, in order; one with `ack` is answered once applied.
const acks = new Map();
worker.postMessage = (message) => acks.get(message.ack)?.();
let nextAck = 0;
function post(message) {
  const ack = nextAck += 1;
  const applied = new Promise((resolve) => acks.set(ack, resolve));
  worker.onmessage({ data: { ...message, ack } });
  return applied;
}

test('the worker encrypts posted encoded streams and decrypts an rtctransform\'s, through one pipeline', async () => {
  const mine = await generateSenderKey();
  const theirs = await generateSenderKey();
  worker.onmessage({ data: { type: 'sender-key', keyId: 4, baseKey: mine.base } });
  worker.onmessage({ data: { type: 'receiver-key', memberId: 'MEM-b', keyId: 0, baseKey: theirs.base } });
  await post({ type: 'slot', mid: '2', memberId: 'MEM-b' });  // applied after the two before it

  // createEncodedStreams: the page posts the sender's streams.
  const plain = [new Uint8Array([1, 2, 3]), new Uint8Array([4, 5, 6, 7])];
  const sent = collector();
  worker.onmessage({ data: { type: 'streams', side: 'send', readable: frames(plain.map((p) => p.buffer.slice(0))), writable: sent.writable } });
  await sent.finished;
  assert.equal(sent.out.length, 2);
  assert.equal(sent.out[1].length, 4 + TAG_BYTES + TRAILER_BYTES);
  const check = new FrameDecryptor();
  await check.setKey(4, mine.base);
  assert.deepEqual(new Uint8Array(await check.decrypt(sent.out[0].slice().buffer)), plain[0]);

  // RTCRtpScriptTransform: the browser fires rtctransform with the receiver's streams and our options.
  const sender = new FrameEncryptor();
  await sender.setKey(0, theirs.base);
  const incoming = [await sender.encrypt(new Uint8Array([9, 9]).buffer), new Uint8Array(40).buffer, await sender.encrypt(new Uint8Array([8]).buffer)];
  const received = collector();
  worker.onrtctransform({ transformer: { options: { side: 'receive', mid: '2' }, readable: frames(incoming), writable: received.writable } });
  await received.finished;
  assert.deepEqual(received.out, [new Uint8Array([9, 9]), new Uint8Array([8])], 'the garbage frame was dropped');

  // The test hook: decryption off lets the encrypted frames through as they are.
  await post({ type: 'decrypt', enabled: false });
  const raw = await sender.encrypt(new Uint8Array([7]).buffer);
  const passed = collector();
  worker.onrtctransform({ transformer: { options: { side: 'receive', mid: '2' }, readable: frames([raw.slice(0)]), writable: passed.writable } });
  await passed.finished;
  assert.deepEqual(passed.out, [new Uint8Array(raw)]);
});
