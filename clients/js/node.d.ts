// TypeScript declarations for node.js: Parlor's Node-only testing helpers (docs/testing.md).
import type { AssertionError } from 'node:assert';
import type { Parlor, Room } from './parlor.js';

export interface RunningParlor {
  url: string;
  /** A client with the dev admin token, for the test-mode routes. */
  parlor: Parlor;
  pid: number;
  /** The server's certificate when it runs with --tls-self-signed (in its temporary working directory), else null. */
  caFile: string | null;
  stderr(): string;
  /** An audio member on this server, with the same binary (and caFile): see startAudioMember. */
  audioMember(name: string, room: string | Room, options?: AudioMemberOptions): Promise<AudioMember>;
  /** Stops its audio members, closes the sessions made through `parlor`, then POST /admin/reset. */
  reset(): Promise<void>;
  /** Stops its audio members, then the server: SIGTERM by PID (SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/** `parlor serve --dev --port 0 ...args` in a temporary directory (bin: PARLOR_BIN, else parlor on PATH). */
export declare function startParlor(options?: { bin?: string; args?: string[]; timeout?: number }): Promise<RunningParlor>;

export interface AudioMemberOptions {
  /** An Ogg Opus file sent as the member's microphone (--play). */
  play?: string;
  /** Start `play` again at its end (--play-loop). */
  loop?: boolean;
  /** Where to write what the member hears (--record), as Ogg Opus. */
  record?: string;
  /** 'mixed' (default): one file; 'tracks': a file per speaker, FILE bob.ogg giving bob-alice.ogg. */
  recordMode?: 'mixed' | 'tracks';
  /** More `parlor join` flags. */
  args?: string[];
  /** ms until the `media:connected` line (default 20000). */
  timeout?: number;
}

/**
 * `parlor join ROOM --as NAME --json --server URL` with --play/--record, resolved once its `media:connected` line
 * came. The process logs in by itself: a user of its own, so give it a name no session of the test uses.
 */
export declare function startAudioMember(options: AudioMemberOptions & {
  name: string; room: string | Room; bin?: string; server?: string; caFile?: string | null;
}): Promise<AudioMember>;

/** A failed audio member (exited, or a line did not come in time); the message has its stdout and stderr. */
export declare class AudioMemberError extends Error {}

export interface AudioLine { type: string; [key: string]: unknown }

export declare class AudioMember {
  readonly name: string;
  readonly pid: number;
  readonly command: string[];
  /** From its "joined" line. */
  readonly memberId: string | null;
  /** Speaker name → track file, from its record:track lines (recordMode 'tracks'). */
  readonly tracks: Record<string, string>;
  /** Every JSON line it printed: joined, the room's events, media:connected, record:track, play:ended, … */
  readonly lines: AudioLine[];
  /** Set by stop(): 0 after a SIGTERM it handled. */
  readonly exitCode: number | string | undefined;
  readonly stdout: string;
  readonly stderr: string;
  /** The first line of `type` whose fields equal the other options; AudioMemberError on exit, record:failed or timeout. */
  waitFor(type: string, options?: { timeout?: number; [field: string]: unknown }): Promise<AudioLine>;
  /** The play:ended line: the whole file has been sent (default timeout 30000 ms). */
  playEnded(options?: { timeout?: number }): Promise<AudioLine>;
  /** The track file of speaker `name` once it exists (recordMode 'tracks'). */
  track(name: string, options?: { timeout?: number }): Promise<string>;
  /** SIGTERM by PID (the member leaves, its files are completed), SIGKILL after graceMs (15000); the exit code. */
  stop(options?: { graceMs?: number }): Promise<number | string>;
}

export declare const HEARD_FLOOR_DB: number;
export declare const HEARD_MARGIN_DB: number;
/** Mean volumes in dB: `tone` in a 50 Hz band around `frequency`, `rest` with a 200 Hz band around it cut. */
export interface ToneLevel { frequency: number; tone: number; rest: number }
/** A failed assertHeard/assertNotHeard: an assert.AssertionError with the measured level. */
export declare class HearingError extends AssertionError { readonly level: ToneLevel }

/** A sine tone as Ogg Opus, through ffmpeg (PARLOR_FFMPEG, else ffmpeg on PATH). */
export declare function makeTone(path: string, options?: { frequency?: number; seconds?: number }): Promise<string>;
export declare function toneLevel(path: string, frequency: number): Promise<ToneLevel>;
/** HearingError unless `frequency` is above `floor` (-30) dB and `margin` (10) dB above the rest of the recording. */
export declare function assertHeard(path: string, frequency: number, options?: { floor?: number; margin?: number }): Promise<ToneLevel>;
export declare function assertNotHeard(path: string, frequency: number, options?: { floor?: number; margin?: number }): Promise<ToneLevel>;
