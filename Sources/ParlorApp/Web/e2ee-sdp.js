// Encrypted rooms send constant-bitrate Opus without DTX (docs/e2ee.md, "What still leaks"): with variable bitrate
// the size of each encrypted packet follows what is said, and DTX stops packets in pauses, so both would tell an
// observer of the (still cleartext-sized) packets more than the audio-level extension already does.
//
// Opus's `usedtx` and `cbr` fmtp parameters state what the receiving side wants, and Chromium configures its encoder
// from the *remote* description's fmtp. So an encrypted room's client applies this to the answer before
// setRemoteDescription (its encoder then runs CBR without DTX) and to its own offer before setLocalDescription (so the
// other side's description of us says the same). RTCRtpSender.setParameters has no standard DTX or CBR control
// (`encodings[].dtx` was dropped from the specification), so SDP is the only lever a web page has.

const OPUS_RTPMAP = /^a=rtpmap:(\d+) opus\/48000(\/\d+)?$/i;
const FMTP = /^a=fmtp:(\d+) (.*)$/;
const ENCRYPTED_ROOM_OPUS = [['usedtx', '0'], ['cbr', '1']];

/** `sdp` with every Opus payload type's `a=fmtp` saying usedtx=0;cbr=1 (others kept; a missing line added). */
export function opusConstantBitrateSdp(sdp) {
  const newline = sdp.includes('\r\n') ? '\r\n' : '\n';
  const lines = sdp.split(/\r?\n/);
  const trailing = lines.length > 0 && lines[lines.length - 1] === '' ? lines.pop() : null;
  const out = [];
  // Payload type numbers are per media section: each section is handled on its own.
  let section = [];
  const flush = () => {
    out.push(...editSection(section));
    section = [];
  };
  for (const line of lines) {
    if (line.startsWith('m=')) flush();
    section.push(line);
  }
  flush();
  if (trailing !== null) out.push(trailing);
  return out.join(newline);
}

function editSection(lines) {
  const opus = new Set();
  for (const line of lines) {
    const match = OPUS_RTPMAP.exec(line);
    if (match) opus.add(match[1]);
  }
  if (opus.size === 0) return lines;
  const withFmtp = new Set();
  const edited = lines.map((line) => {
    const match = FMTP.exec(line);
    if (!match || !opus.has(match[1])) return line;
    withFmtp.add(match[1]);
    return `a=fmtp:${match[1]} ${withParameters(match[2])}`;
  });
  const out = [];
  for (const line of edited) {
    out.push(line);
    const match = OPUS_RTPMAP.exec(line);
    if (match && !withFmtp.has(match[1])) out.push(`a=fmtp:${match[1]} ${withParameters('')}`);
  }
  return out;
}

function withParameters(parameters) {
  const pairs = parameters.split(';').map((part) => part.trim()).filter(Boolean).map((part) => {
    const equals = part.indexOf('=');
    return equals < 0 ? [part, null] : [part.slice(0, equals).trim(), part.slice(equals + 1).trim()];
  });
  for (const [name, value] of ENCRYPTED_ROOM_OPUS) {
    const existing = pairs.find(([key]) => key.toLowerCase() === name);
    if (existing) existing[1] = value;
    else pairs.push([name, value]);
  }
  return pairs.map(([key, value]) => (value === null ? key : `${key}=${value}`)).join(';');
}

/** Whether every Opus payload type of `sdp` says usedtx=0 and cbr=1 (a check for tests and the test hook). */
export function isOpusConstantBitrate(sdp) {
  const hasOpus = sdp.split(/\r?\n/).some((line) => OPUS_RTPMAP.test(line));
  return hasOpus && opusConstantBitrateSdp(sdp) === sdp;
}
