// Node-only testing helpers beside parlor.js (docs/testing.md): startParlor() runs the `parlor` binary as a test
// server; audio members are `parlor join --json --play/--record` child processes ("bob heard alice"); makeTone() and
// assertHeard() make and measure tones with ffmpeg. Not served at /sdk/ and never imported by the web client:
// parlor.js stays the protocol client for browsers and Node alike.
import { AssertionError } from 'node:assert';
import { spawn, execFile } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Parlor, DEV_ADMIN_TOKEN } from './parlor.js';

const OUTPUT_KEPT = 65536;
const keepTail = (text) => text.slice(-OUTPUT_KEPT);

/** Resolves with the signal or exit code once `child` has exited (at once if it already has). */
function exitOf(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.signalCode || child.exitCode);
  return new Promise((done) => child.once('exit', (code, signal) => done(signal || code)));
}

/** SIGTERM by PID, SIGKILL if it has not exited within `graceMs`; resolves with its exit code (or signal). */
async function terminate(child, graceMs) {
  const exited = exitOf(child);
  if (child.exitCode === null && child.signalCode === null) {
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exited;
    clearTimeout(timer);
  }
  return exited;
}

/**
 * Starts `parlor serve --dev --port 0 ...args` (bin: PARLOR_BIN, else parlor on PATH) in a temporary working
 * directory, waits for its "listening on URL" line (deadline `timeout` ms) and returns { url, parlor, pid, caFile,
 * stderr(), audioMember(), reset(), stop() }.
 */
export async function startParlor({ bin = process.env.PARLOR_BIN || 'parlor', args = [], timeout = 15000 } = {}) {
  const workdir = await mkdtemp(join(tmpdir(), 'parlor-test-'));  // ./data (a --tls-self-signed certificate) goes here
  const child = spawn(bin, ['serve', '--dev', '--port', '0', ...args], { cwd: workdir, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => { stderr = keepTail(stderr + text); });
  const exited = exitOf(child);
  let url;
  try {
    url = await new Promise((resolveUrl, reject) => {
      let stdout = '';
      const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${bin}: no "listening on" line within ${timeout} ms; stderr:\n${stderr}`)); }, timeout);
      child.once('error', (error) => { clearTimeout(timer); reject(new Error(`cannot start ${bin}: ${error.message} (set PARLOR_BIN)`)); });
      exited.then((status) => { clearTimeout(timer); reject(new Error(`${bin} exited (${status}) before listening; stderr:\n${stderr}`)); });
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (text) => {
        stdout += text;
        const found = /^listening on (\S+)$/m.exec(stdout);
        if (found) { clearTimeout(timer); resolveUrl(found[1]); }
      });
    });
  } catch (error) {
    await rm(workdir, { recursive: true, force: true });
    throw error;
  }
  const parlor = new Parlor(url, { adminToken: DEV_ADMIN_TOKEN });
  const caFile = url.startsWith('https:') ? join(workdir, 'data', 'tls-cert.pem') : null;
  const members = new Set();
  const stopMembers = () => Promise.all([...members].map((member) => member.stop())).then(() => members.clear());
  return {
    url, parlor, pid: child.pid, caFile,
    stderr: () => stderr,
    /** An audio member on this server with this binary (and its CA under TLS); stopped by reset() and stop(). */
    audioMember(name, room, options = {}) {
      return startAudioMember({ bin, server: url, caFile, name, room, ...options, track: members });
    },
    /** Stops the audio members, closes the sessions made through `parlor` and wipes the server (POST /admin/reset). */
    async reset() { await stopMembers(); await parlor.closeSessions(); await parlor.reset(); },
    /** Stops the audio members, then the server: SIGTERM by PID, SIGKILL if it has not exited within 5 s. */
    async stop() {
      await stopMembers();
      await parlor.closeSessions();
      await terminate(child, 5000);
      await rm(workdir, { recursive: true, force: true });
    },
  };
}

/** An audio member that failed: it exited, or a line did not come in time. The message has its output. */
export class AudioMemberError extends Error {
  constructor(message) { super(message); this.name = 'AudioMemberError'; }
}

/**
 * `parlor join ROOM --as NAME --json --server URL [--play FILE [--play-loop]] [--record FILE [--record-mode M]]`,
 * started and awaited until its `media:connected` line (the audio path is up; `timeout` ms, default 20000).
 * The process logs in by itself, so it is a user of its own: give it a name no session of the test uses.
 */
export async function startAudioMember({ bin = process.env.PARLOR_BIN || 'parlor', server = process.env.PARLOR_SERVER,
  caFile = null, name, room, play, loop = false, record, recordMode, args = [], timeout = 20000, track } = {}) {
  if (!name || !room || !server) throw new TypeError('an audio member needs name, room and server (or PARLOR_SERVER)');
  if (!play && !record) throw new TypeError('an audio member needs play (a file to send) or record (where to write what it hears)');
  if (recordMode !== undefined && !['mixed', 'tracks'].includes(recordMode)) throw new TypeError(`recordMode must be 'mixed' or 'tracks', not ${recordMode}`);
  if (loop && !play) throw new TypeError('loop goes with play');
  const command = ['join', typeof room === 'string' ? room : room.id, '--as', name, '--json', '--server', server,
    ...(caFile ? ['--ca-file', caFile] : []),
    ...(play ? ['--play', resolve(play), ...(loop ? ['--play-loop'] : [])] : []),
    ...(record ? ['--record', resolve(record), ...(recordMode ? ['--record-mode', recordMode] : [])] : []), ...args];
  const { PARLOR_TOKEN, ...env } = process.env;  // --as decides who it is
  const member = new AudioMember(name, bin, command, spawn(bin, command, { env, stdio: ['ignore', 'pipe', 'pipe'] }));
  track?.add(member);
  try {
    await member.waitFor('media:connected', { timeout });
  } catch (error) {
    await member.stop();
    throw error;
  }
  return member;
}

/** One `parlor join --json` process: `memberId`, `tracks` (speaker name → file), `lines`, `exitCode` once stopped. */
export class AudioMember {
  constructor(name, bin, command, child) {
    this.name = name;
    this.command = [bin, ...command];
    this.child = child;
    this.pid = child.pid;
    this.memberId = null;
    this.tracks = {};
    this.lines = [];
    this.exitCode = undefined;
    this.stdout = '';
    this.stderr = '';
    this.watchers = new Set();
    this.startError = null;  // spawn failed (no such binary): 'close' follows, 'exit' does not
    this.ended = false;
    child.once('error', (error) => { this.startError = error; });
    let pending = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (text) => {
      this.stdout = keepTail(this.stdout + text);
      pending += text;
      const complete = pending.split('\n');
      pending = complete.pop();
      for (const raw of complete) this.read(raw);
      this.changed();
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => { this.stderr = keepTail(this.stderr + text); });
    // 'close': the process has ended and stdout and stderr are read to their end, so a failure report has it all.
    this.closed = new Promise((done) => child.once('close', () => { this.ended = true; this.changed(); done(); }));
  }

  read(raw) {
    let line;
    try { line = JSON.parse(raw); } catch { return; }
    if (!line || typeof line !== 'object') return;
    this.lines.push(line);
    if (line.type === 'joined') this.memberId = line.member_id;
    if (line.type === 'record:track') this.tracks[line.name] = line.path;
  }

  changed() { for (const watcher of [...this.watchers]) watcher(); }

  /** The first line of `type` whose fields equal `fields`; AudioMemberError with the output if the process ends
   *  first, prints record:failed, or `timeout` ms pass. */
  waitFor(type, { timeout = 10000, ...fields } = {}) {
    const wanted = `${type}${Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ''}`;
    return new Promise((resolveLine, reject) => {
      const check = () => {
        const line = this.lines.find((l) => l.type === type && Object.entries(fields).every(([k, v]) => l[k] === v));
        if (line) { done(); resolveLine(line); return; }
        const failed = this.lines.find((l) => l.type === 'record:failed');
        if (failed) { done(); reject(this.failure(`could not record: ${failed.detail}`)); return; }
        if (this.startError) { done(); reject(this.failure(`could not start: ${this.startError.message} (set PARLOR_BIN)`)); return; }
        if (this.ended) { done(); reject(this.failure(`exited with ${this.child.signalCode || this.child.exitCode} before printing ${wanted}`)); }
      };
      const timer = setTimeout(() => { done(); reject(this.failure(`printed no ${wanted} within ${timeout} ms`)); }, timeout);
      const done = () => { clearTimeout(timer); this.watchers.delete(check); };
      this.watchers.add(check);
      check();
    });
  }

  /** The `play:ended` line: the whole file has been sent. */
  playEnded({ timeout = 30000 } = {}) { return this.waitFor('play:ended', { timeout }); }

  /** The track file of speaker `name` (recordMode 'tracks'), once it exists. */
  async track(name, { timeout = 10000 } = {}) { return (await this.waitFor('record:track', { timeout, name })).path; }

  /** SIGTERM by PID (the member leaves; its recording is completed), SIGKILL after `graceMs`; the exit code. */
  async stop({ graceMs = 15000 } = {}) {
    if (!this.ended && this.child.pid !== undefined) await terminate(this.child, graceMs);
    await this.closed;
    this.exitCode = this.child.signalCode || this.child.exitCode;
    return this.exitCode;
  }

  failure(what) {
    return new AudioMemberError(`audio member ${this.name} (pid ${this.pid}: ${this.command.join(' ')}) ${what}\n`
      + `stdout:\n${this.stdout || '(nothing)'}\nstderr:\n${this.stderr || '(nothing)'}`);
  }
}

// Tones with ffmpeg: docs/testing.md's shell recipe (bandpass/bandreject, then volumedetect) as functions. The
// bands are in Hz (width_type=h): ffmpeg's default width is a Q factor, which rings long enough to blur the measure.
export const HEARD_FLOOR_DB = -30;   // a 2 s tone mixed into a recording measures about -22 dB, -50 dB outside its band
export const HEARD_MARGIN_DB = 10;

function ffmpeg(args, what) {
  const bin = process.env.PARLOR_FFMPEG || 'ffmpeg';
  return new Promise((done, reject) => {
    execFile(bin, ['-nostdin', '-hide_banner', ...args], { maxBuffer: 16 << 20, timeout: 60000 }, (error, stdout, stderr) => {
      if (error?.code === 'ENOENT') {
        reject(new Error(`ffmpeg is needed to ${what} but ${bin} was not found (Debian/Ubuntu: apt-get install ffmpeg; or set PARLOR_FFMPEG)`));
      } else if (error) {
        reject(new Error(`ffmpeg failed to ${what} (${error.code ?? error.signal}):\n${String(stderr).slice(-2000)}`));
      } else {
        done(String(stderr));
      }
    });
  });
}

/** Writes a sine tone of `frequency` Hz lasting `seconds` to `path` as Ogg Opus; resolves with the path. */
export async function makeTone(path, { frequency = 440, seconds = 2 } = {}) {
  if (!(frequency > 0 && seconds > 0)) throw new RangeError(`a tone needs a positive frequency and length, not ${frequency} Hz for ${seconds} s`);
  await ffmpeg(['-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=frequency=${frequency}:duration=${seconds}`, '-c:a', 'libopus', '-f', 'ogg', path],
    `write a ${frequency} Hz tone to ${path}`);
  return path;
}

async function meanVolume(path, filter) {
  const log = await ffmpeg(['-i', path, '-af', `${filter},volumedetect`, '-f', 'null', '-'], `measure ${path}`);
  const found = /mean_volume:\s*(-?[0-9.]+|-inf) dB/.exec(log);
  if (!found) throw new Error(`ffmpeg measured no volume in ${path} (no audio in it?):\n${log.slice(-2000)}`);
  return found[1] === '-inf' ? -Infinity : Number(found[1]);
}

/** Mean volumes in dB: `tone` in a 50 Hz band around `frequency`, `rest` with a 200 Hz band around it cut. */
export async function toneLevel(path, frequency) {
  if (!(await stat(path).catch(() => null))?.isFile()) throw new Error(`no recording at ${path}`);
  return { frequency, tone: await meanVolume(path, `bandpass=f=${frequency}:width_type=h:w=50`), rest: await meanVolume(path, `bandreject=f=${frequency}:width_type=h:w=200`) };
}

const heard = (level, floor, margin) => level.tone > floor && level.tone > level.rest + margin;

/** Rejects with a HearingError (an AssertionError) unless `frequency` is above `floor` dB and `margin` dB above the rest. */
export async function assertHeard(path, frequency, { floor = HEARD_FLOOR_DB, margin = HEARD_MARGIN_DB } = {}) {
  const level = await toneLevel(path, frequency);
  if (!heard(level, floor, margin)) {
    throw new HearingError(`${path}: ${frequency} Hz not heard: its band ${level.tone.toFixed(1)} dB, the rest ${level.rest.toFixed(1)} dB `
      + `(heard means above ${floor} dB and ${margin} dB above the rest)`, level);
  }
  return level;
}

/** The opposite of assertHeard, with the same measure. */
export async function assertNotHeard(path, frequency, { floor = HEARD_FLOOR_DB, margin = HEARD_MARGIN_DB } = {}) {
  const level = await toneLevel(path, frequency);
  if (heard(level, floor, margin)) {
    throw new HearingError(`${path}: ${frequency} Hz heard: its band ${level.tone.toFixed(1)} dB, the rest ${level.rest.toFixed(1)} dB`, level);
  }
  return level;
}

/** What assertHeard/assertNotHeard throw: a failed assertion; `level` has the measured { frequency, tone, rest }. */
export class HearingError extends AssertionError {
  constructor(message, level) { super({ message }); this.name = 'HearingError'; this.level = level; }
}
