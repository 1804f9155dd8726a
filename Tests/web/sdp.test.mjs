// The encrypted room's Opus parameters (usedtx=0;cbr=1) written into real Chromium SDP.
import './webcrypto.mjs';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { opusConstantBitrateSdp, isOpusConstantBitrate } from '../../Sources/ParlorApp/Web/e2ee-sdp.js';

// An offer as Chromium makes it (CRLF line ends, Opus 111, RED 63 over it, two audio sections).
const chromium = readFileSync(new URL('./fixtures/chromium-offer-two-sections.sdp', import.meta.url), 'utf8');

test('every Opus fmtp line gets usedtx=0 and cbr=1, and nothing else changes', () => {
  assert.ok(chromium.includes('\r\n') && chromium.includes('a=fmtp:111 minptime=10;useinbandfec=1\r\n'));
  assert.equal(isOpusConstantBitrate(chromium), false);
  const edited = opusConstantBitrateSdp(chromium);
  assert.equal(edited.split('a=fmtp:111 minptime=10;useinbandfec=1;usedtx=0;cbr=1\r\n').length - 1, 2, 'both sections');
  assert.ok(edited.includes('a=fmtp:63 111/111\r\n'), 'RED untouched');
  assert.equal(isOpusConstantBitrate(edited), true);
  assert.equal(opusConstantBitrateSdp(edited), edited, 'idempotent');
  const before = chromium.split('\r\n');
  const after = edited.split('\r\n');
  assert.equal(after.length, before.length);
  assert.deepEqual(after.filter((line, i) => line !== before[i]).length, 2);
  assert.ok(edited.endsWith('\r\n'));
});

test('existing values are overridden, a missing fmtp is added, other codecs and LF endings are kept', () => {
  const sdp = [
    'v=0', 'm=audio 9 UDP/TLS/RTP/SAVPF 109 0', 'a=rtpmap:109 OPUS/48000/2', 'a=rtpmap:0 PCMU/8000', 'a=fmtp:0 foo=1',
    'm=audio 9 UDP/TLS/RTP/SAVPF 96', 'a=rtpmap:96 opus/48000/2', 'a=fmtp:96 usedtx=1; cbr=0;stereo=1', '',
  ].join('\n');
  const edited = opusConstantBitrateSdp(sdp);
  assert.deepEqual(edited.split('\n'), [
    'v=0', 'm=audio 9 UDP/TLS/RTP/SAVPF 109 0', 'a=rtpmap:109 OPUS/48000/2', 'a=fmtp:109 usedtx=0;cbr=1',
    'a=rtpmap:0 PCMU/8000', 'a=fmtp:0 foo=1',
    'm=audio 9 UDP/TLS/RTP/SAVPF 96', 'a=rtpmap:96 opus/48000/2', 'a=fmtp:96 usedtx=0;cbr=1;stereo=1', '',
  ]);
  assert.equal(isOpusConstantBitrate('v=0\r\nm=audio 9 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n'), false, 'no Opus at all');
});
