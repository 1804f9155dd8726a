// Speaking detection on the local microphone, for our own tile. With the mesh our changes are sent as
// audio:speaking:on/off and relayed to the others; through the server's forwarding unit the server detects speaking
// from the audio levels in the packets and tells everyone, so nothing is sent.
import { state } from './state.js';
import { renderTile } from './tiles.js';

// Every 50 ms the RMS of the last ~46 ms feeds a peak-hold envelope (so short syllables count), and two thresholds
// with hold times give hysteresis.
const SPEAK_TICK_MS = 50;
const SPEAK_DECAY = 0.85;    // envelope kept per tick
const SPEAK_ON_LEVEL = 0.03;
const SPEAK_OFF_LEVEL = 0.015;
const SPEAK_ON_TICKS = 2;    // 100 ms above the on level
const SPEAK_OFF_TICKS = 10;  // 500 ms below the off level

export function startSpeakingDetector(current) {
  const context = new AudioContext();
  context.resume().catch(() => {});
  const source = context.createMediaStreamSource(current.stream);
  const analyser = context.createAnalyser();
  analyser.fftSize = 2048;  // ~46 ms at 44.1 kHz: consecutive ticks see (nearly) all of the sound
  source.connect(analyser);
  const samples = new Float32Array(analyser.fftSize);
  let envelope = 0;
  let above = 0;
  let below = 0;
  const timer = setInterval(() => {
    analyser.getFloatTimeDomainData(samples);
    let sum = 0;
    for (const s of samples) sum += s * s;
    const rms = current.muted ? 0 : Math.sqrt(sum / samples.length);
    envelope = current.muted ? 0 : Math.max(rms, envelope * SPEAK_DECAY);
    above = envelope > SPEAK_ON_LEVEL ? above + 1 : 0;
    below = envelope < SPEAK_OFF_LEVEL ? below + 1 : 0;
    if (!current.speaking && above >= SPEAK_ON_TICKS) setSpeaking(true);
    else if (current.speaking && below >= SPEAK_OFF_TICKS) setSpeaking(false);
  }, SPEAK_TICK_MS);
  return {
    stop() { clearInterval(timer); context.close().catch(() => {}); },
    resume() { if (context.state === 'suspended') context.resume().catch(() => {}); },
  };
}

/** Our own speaking flag: shown at once; with the mesh also sent, only when it changes. */
export function setSpeaking(speaking) {
  const { room } = state;
  if (!room || room.speaking === speaking) return;
  room.speaking = speaking;
  const me = room.members.get(room.memberId);
  if (me) me.speaking = speaking;
  renderTile(room.memberId);
  if (room.media?.serverDetectsSpeaking) return;  // the server detects it from our packets
  state.connection?.request(speaking ? 'audio:speaking:on' : 'audio:speaking:off', { cid: room.cid }).catch(() => {});
}
