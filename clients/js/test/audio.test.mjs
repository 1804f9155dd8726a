// node.js's audio members against the real binary: `parlor join --play/--record` driven from Node, and the ffmpeg
// checks that say what a recording holds (docs/testing.md, "Audio in tests without a browser").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, access } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { AudioMemberError, HearingError, assertHeard, assertNotHeard, makeTone, startAudioMember, startParlor, toneLevel } from '../node.js';
import { useServer, bin } from '../support/server.mjs';

const context = useServer();
const T = { timeout: 30000 };
let work;
let tone440;
before(async () => {
  work = await mkdtemp(join(tmpdir(), 'parlor-js-audio-'));
  tone440 = await makeTone(join(work, 'alice.opus'), { frequency: 440, seconds: 1.5 });
});
after(() => rm(work, { recursive: true, force: true }));

test('bob heard alice (mixed), and a per-speaker track names her', T, async () => {
  const server = context.server;
  const room = await server.parlor.createRoom('Audio');
  const bob = await server.audioMember('bob-ears', room.id, { record: join(work, 'bob.ogg') });
  const carol = await server.audioMember('carol-ears', room, { record: join(work, 'carol.ogg'), recordMode: 'tracks' });
  const alice = await server.audioMember('alice-mic', room.id, { play: tone440 });
  const ended = await alice.playEnded({ timeout: 15000 });
  assert.ok(ended.packets > 50, `1.5 s in 20 ms packets, got ${ended.packets}`);
  const track = await carol.track('alice-mic', { timeout: 5000 });
  assert.deepEqual(await Promise.all([alice.stop(), bob.stop(), carol.stop()]), [0, 0, 0]);
  assert.ok(bob.memberId && bob.memberId !== alice.memberId);

  const level = await assertHeard(join(work, 'bob.ogg'), 440);
  assert.ok(level.tone > level.rest + 20, `a clean tone: about 30 dB, got ${JSON.stringify(level)}`);
  await assert.rejects(assertHeard(join(work, 'bob.ogg'), 1000), (error) => error instanceof HearingError
    && error instanceof assert.AssertionError && /1000 Hz not heard/.test(error.message));  // the check can fail
  await assertNotHeard(join(work, 'bob.ogg'), 1000);

  assert.equal(track, join(work, 'carol-alice-mic.ogg'));
  assert.deepEqual(carol.tracks, { 'alice-mic': track });
  await assertHeard(track, 440);
  await assert.rejects(access(join(work, 'carol.ogg')), { code: 'ENOENT' });  // tracks mode writes no mixed file
});

test('nobody playing: the tone is not heard', T, async () => {
  const { parlor } = context.server;
  const room = await parlor.createRoom('Silence');
  const dave = await context.server.audioMember('dave-ears', room.id, { record: join(work, 'dave.ogg') });
  const alice = await parlor.session('alice');  // joins but sends no audio
  await alice.join(room.id);
  assert.equal(await dave.stop(), 0);
  await assert.rejects(assertHeard(join(work, 'dave.ogg'), 440), /440 Hz not heard/);
});

test('a file that is not Ogg Opus fails at once, with the output', T, async () => {
  const room = await context.server.parlor.createRoom('Bad file');
  const bogus = join(work, 'bogus.opus');
  await writeFile(bogus, 'not an ogg file');
  await assert.rejects(context.server.audioMember('erin-mic', room.id, { play: bogus, timeout: 15000 }), (error) =>
    error instanceof AudioMemberError && /exited with 2 before printing media:connected/.test(error.message) && /--play/.test(error.message));
});

test('bad arguments and a missing binary or ffmpeg are clear errors', T, async () => {
  await assert.rejects(startAudioMember({ name: 'x', room: 'RM-x', server: 'http://127.0.0.1:1' }), /needs play .* or record/);
  await assert.rejects(startAudioMember({ name: 'x', room: 'RM-x', server: 'http://127.0.0.1:1', record: 'x.ogg', recordMode: 'stereo' }), /recordMode/);
  await assert.rejects(startAudioMember({ bin: join(work, 'no-parlor'), name: 'x', room: 'RM-x', server: 'http://127.0.0.1:1', record: join(work, 'x.ogg') }),
    (error) => error instanceof AudioMemberError && /could not start: .*ENOENT/.test(error.message));
  const saved = process.env.PARLOR_FFMPEG;
  process.env.PARLOR_FFMPEG = join(work, 'no-ffmpeg');
  try {
    await assert.rejects(makeTone(join(work, 'x.opus')), /ffmpeg is needed .* apt-get install ffmpeg/);
    await assert.rejects(toneLevel(tone440, 440), /ffmpeg is needed/);
  } finally {
    if (saved === undefined) delete process.env.PARLOR_FFMPEG; else process.env.PARLOR_FFMPEG = saved;
  }
  await assert.rejects(toneLevel(join(work, 'nothing.ogg'), 440), /no recording at/);
});

test('over TLS: the audio member trusts the server through its caFile', T, async () => {
  const server = await startParlor({ bin, args: ['--tls-self-signed'] });
  try {
    assert.match(server.url, /^https:/);
    assert.ok(server.caFile);
    // Node's fetch cannot be given a CA here, so the room comes from the CLI, trusting the same file.
    const { stdout } = await promisify(execFile)(bin, ['rooms', 'create', 'TLS audio', '--server', server.url, '--ca-file', server.caFile]);
    const room = stdout.trim();
    const bob = await server.audioMember('bob-ears', room, { record: join(work, 'bob-tls.ogg') });
    const alice = await server.audioMember('alice-mic', room, { play: tone440 });
    await alice.playEnded({ timeout: 15000 });
    assert.deepEqual([await alice.stop(), await bob.stop()], [0, 0]);
    await assertHeard(join(work, 'bob-tls.ogg'), 440);
  } finally {
    await server.stop();
  }
  await assert.rejects(access(server.caFile), { code: 'ENOENT' });  // its working directory went with it
});
