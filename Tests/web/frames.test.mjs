// Audio frame encryption: the frame format, refusals (tampered, replayed, unknown key), the counter, and the worker's
// pipeline over {data: ArrayBuffer} frames as both encoded-transform APIs hand them over.
import './webcrypto.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  FrameEncryptor, FrameDecryptor, ReplayWindow, readTrailer, frameTransform, pipeFrames, REPLAY_WINDOW, TAG_BYTES,
  TRAILER_BYTES, MAX_FRAME_BYTES,
} from '../../Sources/ParlorApp/Web/e2ee-frames.js';
import { FramePipeline, SLOT_SWITCH_GRACE_MS } from '../../Sources/ParlorApp/Web/e2ee-pipeline.js';
import { generateSenderKey, ratchetSenderKey, MAX_RATCHET_STEPS } from '../../Sources/ParlorApp/Web/e2ee-senderkey.js';

function opusFrame(seed, length = 80) {
  return Uint8Array.from({ length }, (_, i) => (seed * 31 + i * 7) & 0xff).buffer;
}

async function pair(keyId = 3) {
  const { base } = await generateSenderKey();
  const encryptor = new FrameEncryptor();
  await encryptor.setKey(keyId, base);
  const decryptor = new FrameDecryptor();
  await decryptor.setKey(keyId, base);
  return { base, encryptor, decryptor };
}

const bytes = (buffer) => new Uint8Array(buffer);

test('a frame round-trips; the ciphertext is the frame encrypted whole, then the tag and the trailer', async () => {
  const { encryptor, decryptor } = await pair(3);
  const frame = opusFrame(1);
  const sealed = await encryptor.encrypt(frame);
  assert.equal(sealed.byteLength, frame.byteLength + TAG_BYTES + TRAILER_BYTES);
  assert.equal(readTrailer(sealed).keyId, 3);
  assert.notDeepEqual(bytes(sealed).subarray(0, frame.byteLength), bytes(frame), 'no clear byte is left');
  assert.deepEqual(bytes(await decryptor.decrypt(sealed)), bytes(frame));
  const empty = await encryptor.encrypt(new ArrayBuffer(0));
  assert.equal((await decryptor.decrypt(empty)).byteLength, 0);
});

test('the counter goes up by one per frame, and a new encryptor for the same key starts above it', async () => {
  const { base, encryptor, decryptor } = await pair(0);
  const counters = [];
  for (let i = 0; i < 5; i += 1) counters.push(readTrailer(await encryptor.encrypt(opusFrame(i))).counter);
  for (let i = 1; i < counters.length; i += 1) assert.equal(counters[i], counters[i - 1] + 1n);
  // A renegotiation makes another encryptor with the same key (even with the clock set back): no IV is reused, and
  // the receiver takes its frames (they are ahead of everything it saw).
  const again = new FrameEncryptor({ wallClock: () => 0 });
  await again.setKey(0, base);
  const next = await again.encrypt(opusFrame(9));
  assert.ok(readTrailer(next).counter > counters[counters.length - 1]);
  assert.deepEqual(bytes(await decryptor.decrypt(next)), bytes(opusFrame(9)));
});

test('a tampered frame is dropped, whichever byte changed', async () => {
  const { encryptor, decryptor } = await pair(5);
  const sealed = bytes(await encryptor.encrypt(opusFrame(2, 20)));
  for (let i = 0; i < sealed.length; i += 1) {
    const tampered = Uint8Array.from(sealed);
    tampered[i] ^= 0x80;
    assert.equal(await decryptor.decrypt(tampered.buffer), null, `byte ${i}`);
  }
  assert.equal(await decryptor.decrypt(sealed.slice(0, 10).buffer), null, 'too short');
  assert.equal(await decryptor.decrypt(new ArrayBuffer(MAX_FRAME_BYTES + 100)), null, 'too long');
  assert.equal(await decryptor.decrypt('not a buffer'), null);
  assert.deepEqual(bytes(await decryptor.decrypt(sealed.buffer)), bytes(opusFrame(2, 20)), 'the original still decrypts');
});

test('a replayed frame is dropped, reordered frames within the window are taken, very old ones are not', async () => {
  const { encryptor, decryptor } = await pair(1);
  const frames = [];
  for (let i = 0; i < REPLAY_WINDOW + 10; i += 1) frames.push(await encryptor.encrypt(opusFrame(i)));
  assert.ok(await decryptor.decrypt(frames[1]));
  assert.equal(await decryptor.decrypt(frames[1]), null, 'replayed');
  assert.ok(await decryptor.decrypt(frames[0]), 'one behind, not seen yet');
  assert.equal(await decryptor.decrypt(frames[0]), null, 'replayed after reordering');
  assert.ok(await decryptor.decrypt(frames[REPLAY_WINDOW + 5]));
  assert.equal(await decryptor.decrypt(frames[2]), null, 'more than the window behind the newest');
  assert.ok(await decryptor.decrypt(frames[10]), 'within the window');
  // The same frame twice at once: only one of the two is taken.
  const twice = await Promise.all([decryptor.decrypt(frames[REPLAY_WINDOW + 9]), decryptor.decrypt(frames[REPLAY_WINDOW + 9])]);
  assert.equal(twice.filter(Boolean).length, 1);
});

test('the replay window by itself', () => {
  const window = new ReplayWindow();
  assert.equal(window.fresh(5n), true);
  window.accept(5n);
  assert.equal(window.fresh(5n), false);
  assert.equal(window.fresh(4n), true);
  window.accept(5n + BigInt(REPLAY_WINDOW) * 3n);
  assert.equal(window.fresh(5n), false, 'far behind now');
  assert.equal(window.fresh(5n + BigInt(REPLAY_WINDOW) * 3n - 1n), true);
});

test('a frame under a key id the receiver does not hold is dropped; a forged frame uses up no counter', async () => {
  const { encryptor, decryptor } = await pair(1);
  const other = await generateSenderKey();
  const stranger = new FrameEncryptor();
  await stranger.setKey(2, other.base);
  assert.equal(await decryptor.decrypt(await stranger.encrypt(opusFrame(1))), null, 'unknown key id');
  // Same key id, another key: GCM fails, and the genuine frame with that counter still decrypts afterwards.
  const genuine = await encryptor.encrypt(opusFrame(3));
  const forged = bytes(await stranger.encrypt(opusFrame(3)));
  forged.set(bytes(genuine).subarray(genuine.byteLength - TRAILER_BYTES), forged.length - TRAILER_BYTES);
  assert.equal(await decryptor.decrypt(forged.buffer), null);
  assert.deepEqual(bytes(await decryptor.decrypt(genuine)), bytes(opusFrame(3)));
  // A receiver that forgot the sender (it left) decrypts nothing of it.
  decryptor.clear();
  assert.equal(await decryptor.decrypt(await encryptor.encrypt(opusFrame(4))), null);
});

test('the transform replaces frame.data, drops what fails, and never throws into the pipeline', async () => {
  const { encryptor, decryptor } = await pair(0);
  const encrypt = frameTransform((data) => encryptor.encrypt(data));
  const decrypt = frameTransform((data) => decryptor.decrypt(data));
  const frame = { data: opusFrame(7), timestamp: 960 };
  const sent = await encrypt(frame);
  assert.equal(sent.timestamp, 960);
  assert.equal(sent.data.byteLength, opusFrame(7).byteLength + TAG_BYTES + TRAILER_BYTES);
  const received = await decrypt({ data: sent.data.slice(0) });
  assert.deepEqual(bytes(received.data), bytes(opusFrame(7)));
  assert.equal(await decrypt({ data: sent.data.slice(0) }), null, 'replayed: dropped');
  assert.equal(await frameTransform(() => { throw new Error('boom'); })({ data: new ArrayBuffer(4) }), null);
  // No key yet: nothing goes out in the clear.
  assert.equal(await frameTransform((data) => new FrameEncryptor().encrypt(data))({ data: opusFrame(1) }), null);
});

test('pipeFrames runs the transform over a stream of frames and leaves out the dropped ones', async () => {
  const { encryptor, decryptor } = await pair(0);
  const sealed = [];
  for (let i = 0; i < 4; i += 1) sealed.push(await encryptor.encrypt(opusFrame(i)));
  sealed.splice(2, 0, sealed[1].slice(0));  // a replay in the middle
  const readable = new ReadableStream({ start(controller) { for (const data of sealed) controller.enqueue({ data }); controller.close(); } });
  const out = [];
  await pipeFrames(readable, new WritableStream({ write(frame) { out.push(bytes(frame.data)); } }),
    frameTransform((data) => decryptor.decrypt(data)));
  assert.deepEqual(out, [0, 1, 2, 3].map((i) => bytes(opusFrame(i))));
});

test('the pipeline decrypts each slot with its current sender\'s keys, and the previous sender\'s just after a switch', async () => {
  let clock = 0;
  const sender = new FramePipeline({ now: () => clock });
  const receiver = new FramePipeline({ now: () => clock });
  const a = await generateSenderKey();
  const b = await generateSenderKey();
  await sender.handle({ type: 'sender-key', keyId: 0, baseKey: a.base });
  const fromA = sender.senderTransform();
  const bPipeline = new FramePipeline({ now: () => clock });
  await bPipeline.handle({ type: 'sender-key', keyId: 0, baseKey: b.base });
  const fromB = bPipeline.senderTransform();
  await receiver.handle({ type: 'receiver-key', memberId: 'MEM-a', keyId: 0, baseKey: a.base });
  await receiver.handle({ type: 'receiver-key', memberId: 'MEM-b', keyId: 0, baseKey: b.base });
  const slot1 = receiver.receiverTransform('1');

  assert.equal(await slot1({ data: (await fromA({ data: opusFrame(1) })).data }), null, 'no one in the slot yet');
  await receiver.handle({ type: 'slot', mid: '1', memberId: 'MEM-a' });
  assert.deepEqual(bytes((await slot1({ data: (await fromA({ data: opusFrame(2) })).data })).data), bytes(opusFrame(2)));
  const aInFlight = (await fromA({ data: opusFrame(3) })).data;
  const aLate = (await fromA({ data: opusFrame(4) })).data;
  await receiver.handle({ type: 'slot', mid: '1', memberId: 'MEM-b' });
  assert.deepEqual(bytes((await slot1({ data: (await fromB({ data: opusFrame(5) })).data })).data), bytes(opusFrame(5)));
  assert.deepEqual(bytes((await slot1({ data: aInFlight })).data), bytes(opusFrame(3)), 'a\'s frame in flight');
  clock = SLOT_SWITCH_GRACE_MS + 1;
  assert.equal(await slot1({ data: aLate }), null, 'a is no longer in this slot');

  // The test hook: with decryption off, frames pass through still encrypted.
  await receiver.handle({ type: 'decrypt', enabled: false });
  const sealed = (await fromB({ data: opusFrame(6) })).data;
  assert.equal((await slot1({ data: sealed })).data, sealed);
  await receiver.handle({ type: 'decrypt', enabled: true });
  // A member who left is forgotten: its frames drop.
  await receiver.handle({ type: 'forget', memberId: 'MEM-b' });
  assert.equal(await slot1({ data: (await fromB({ data: opusFrame(7) })).data }), null);
  // A malformed message changes nothing and does not break the queue.
  await receiver.handle(null);
  await receiver.handle({ type: 'receiver-key', memberId: 'MEM-c', keyId: 0, baseKey: 'not a key' });
  await receiver.handle({ type: 'slot', mid: '1', memberId: 'MEM-a' });
  clock += SLOT_SWITCH_GRACE_MS + 1;
  assert.deepEqual(bytes((await slot1({ data: (await fromA({ data: opusFrame(8) })).data })).data), bytes(opusFrame(8)));
});

test('the pipeline counts the frames it encrypted, decrypted, dropped and passed on encrypted', async () => {
  const sender = new FramePipeline();
  const receiver = new FramePipeline();
  const key = await generateSenderKey();
  await sender.handle({ type: 'sender-key', keyId: 0, baseKey: key.base });
  await receiver.handle({ type: 'receiver-key', memberId: 'MEM-a', keyId: 0, baseKey: key.base });
  await receiver.handle({ type: 'slot', mid: '1', memberId: 'MEM-a' });
  const send = sender.senderTransform();
  const slot = receiver.receiverTransform('1');
  const sealed = [];
  for (let i = 0; i < 3; i += 1) sealed.push((await send({ data: opusFrame(i) })).data);
  await slot({ data: sealed[0] });
  await slot({ data: sealed[0] });  // a replay: dropped
  await receiver.handle({ type: 'decrypt', enabled: false });
  await slot({ data: sealed[1] });
  assert.deepEqual(sender.counts, { encrypted: 3, decrypted: 0, dropped: 0, passedEncrypted: 0 });
  assert.deepEqual(receiver.counts, { encrypted: 0, decrypted: 1, dropped: 1, passedEncrypted: 1 });
});

test('a receiver follows the sender\'s ratchet by itself, and only so far', async () => {
  let clock = 0;
  const { base } = await generateSenderKey();
  const encryptor = new FrameEncryptor();
  await encryptor.setKey(10, base);
  const decryptor = new FrameDecryptor({ now: () => clock });
  await decryptor.setKey(10, base);
  const old = await encryptor.encrypt(opusFrame(1));
  const oldLate = await encryptor.encrypt(opusFrame(1));
  // Someone joined: the sender ratchets twice (two newcomers) and sends under id 12.
  const once = await ratchetSenderKey(base);
  const twice = await ratchetSenderKey(once.base);
  await encryptor.setKey(12, twice.base);
  const ratcheted = await encryptor.encrypt(opusFrame(2));
  assert.deepEqual(bytes(await decryptor.decrypt(ratcheted)), bytes(opusFrame(2)));
  assert.equal(decryptor.current.id, 12, 'the ratcheted key became current');
  assert.deepEqual(bytes(await decryptor.decrypt(old)), bytes(opusFrame(1)), 'the previous key, in flight');
  clock = 10000;
  assert.equal(await decryptor.decrypt(oldLate), null, 'and not after the bound');

  // A frame that only claims a key id ahead (another key) does not move the receiver.
  const { base: otherBase } = await generateSenderKey();
  const stranger = new FrameEncryptor();
  await stranger.setKey(13, otherBase);
  assert.equal(await decryptor.decrypt(await stranger.encrypt(opusFrame(3))), null);
  assert.equal(decryptor.current.id, 12);
  // Further ahead than MAX_RATCHET_STEPS: not derived, dropped (the sender renews its key before that).
  let far = { base: twice.base };
  for (let step = 0; step <= MAX_RATCHET_STEPS; step += 1) far = await ratchetSenderKey(far.base);
  const farEncryptor = new FrameEncryptor();
  await farEncryptor.setKey((12 + MAX_RATCHET_STEPS + 1) & 0xff, far.base);
  assert.equal(await decryptor.decrypt(await farEncryptor.encrypt(opusFrame(4))), null);
  // Exactly MAX_RATCHET_STEPS ahead still decrypts.
  let edge = { base: twice.base };
  for (let step = 0; step < MAX_RATCHET_STEPS; step += 1) edge = await ratchetSenderKey(edge.base);
  const edgeEncryptor = new FrameEncryptor();
  await edgeEncryptor.setKey((12 + MAX_RATCHET_STEPS) & 0xff, edge.base);
  assert.deepEqual(bytes(await decryptor.decrypt(await edgeEncryptor.encrypt(opusFrame(5)))), bytes(opusFrame(5)));
});

test('a ratcheted key that later arrives wrapped as well keeps its replay window', async () => {
  const { base } = await generateSenderKey();
  const next = await ratchetSenderKey(base);
  const encryptor = new FrameEncryptor();
  await encryptor.setKey(1, next.base);
  const decryptor = new FrameDecryptor();
  await decryptor.setKey(0, base);
  const frame = await encryptor.encrypt(opusFrame(1));
  assert.ok(await decryptor.decrypt(frame.slice(0)), 'followed the ratchet');
  await decryptor.setKey(1, next.base);  // the same key, delivered wrapped
  assert.equal(await decryptor.decrypt(frame.slice(0)), null, 'still a replay');
  // Two frames under a new ratchet step decrypted at once share one replay window.
  const further = await ratchetSenderKey(next.base);
  await encryptor.setKey(2, further.base);
  const pair = await encryptor.encrypt(opusFrame(2));
  const results = await Promise.all([decryptor.decrypt(pair.slice(0)), decryptor.decrypt(pair.slice(0))]);
  assert.equal(results.filter(Boolean).length, 1);
});
