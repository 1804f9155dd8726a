// The encryption worker of an encrypted room (a module worker: new Worker('/e2ee-worker.js', {type: 'module'})).
// Frames reach it two ways, through the same FramePipeline: RTCRtpScriptTransform's rtctransform event (options
// {side: 'send'} or {side: 'receive', mid}), or the streams of createEncodedStreams posted by e2ee-media.js as
// {type: 'streams', side, mid, readable, writable}. Keys arrive as CryptoKeys (structured clone keeps them
// non-extractable); see FramePipeline.handle for the messages.
import { pipeFrames } from './e2ee-frames.js';
import { FramePipeline } from './e2ee-pipeline.js';

const pipeline = new FramePipeline();

function attach(side, mid, readable, writable) {
  const transform = side === 'send' ? pipeline.senderTransform() : pipeline.receiverTransform(mid);
  pipeFrames(readable, writable, transform);
}

self.onrtctransform = (event) => {
  pipeline.counts.transforms = (pipeline.counts.transforms || 0) + 1;
  const { transformer } = event;
  const { side, mid } = transformer.options || {};
  attach(side, mid, transformer.readable, transformer.writable);
};

// A message with an `ack` value is answered with {type: 'ack', ack} once applied: the page (and its test hook) can
// wait for a key to be in place instead of guessing.
self.onmessage = (event) => {
  const message = event.data;
  if (message?.type === 'streams') {
    pipeline.counts.streams = (pipeline.counts.streams || 0) + 1;
    attach(message.side, message.mid, message.readable, message.writable);
    return;
  }
  pipeline.handle(message).then(() => {
    if (message?.ack === undefined) return;
    // {type: 'counts'} is answered with the frames counted so far (the test hook's view into the worker).
    self.postMessage({ type: 'ack', ack: message.ack, ...(message.type === 'counts' ? { counts: { ...pipeline.counts } } : {}) });
  });
};
