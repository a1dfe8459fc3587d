import { type RemotingCommand, SERIALIZE_JSON, SERIALIZE_ROCKETMQ } from './command.js';
import { FrameError, decodeBinaryHeader, decodeJsonHeader } from './header-codec.js';

/** Java NettyDecoder's default frameMaxLength: a frame (length field included) may not exceed 16 MiB. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Our own cap on a header: no legitimate header comes close. */
export const MAX_HEADER_BYTES = 1024 * 1024;

/**
 * Streaming frame decoder: feed it socket chunks, get whole commands back. Partial frames are kept
 * (one growing buffer with a read cursor); a malformed frame throws FrameError and the caller closes the
 * connection.
 */
export class FrameDecoder {
  private buf: Buffer = Buffer.alloc(0);
  private start = 0;
  private end = 0;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Bytes received but not yet decoded into a frame. */
  get bufferedBytes(): number {
    return this.end - this.start;
  }

  push(chunk: Buffer, out: RemotingCommand[]): void {
    this.append(chunk);
    for (;;) {
      const avail = this.end - this.start;
      if (avail < 4) break;
      const length = this.buf.readInt32BE(this.start);
      if (length < 4 || length + 4 > this.maxFrameBytes) {
        throw new FrameError(`frame length ${length} out of range (max ${this.maxFrameBytes - 4})`);
      }
      if (avail < 4 + length) break;
      const frameStart = this.start + 4;
      const frameEnd = frameStart + length;
      this.start = frameEnd;
      // The frame must be copied out only when the body outlives the buffer; subarray keeps a view and the
      // buffer is never written again below `start`, because append() reallocates instead of compacting in place.
      out.push(decodeFrameBody(this.buf.subarray(frameStart, frameEnd)));
    }
    if (this.start === this.end) {
      this.start = 0;
      this.end = 0;
      if (this.buf.length > 64 * 1024) this.buf = Buffer.alloc(0);
    }
  }

  private append(chunk: Buffer): void {
    if (this.start === this.end) {
      // Fast path: no leftover, decode straight from the chunk.
      this.buf = chunk;
      this.end = chunk.length;
      return;
    }
    const leftover = this.end - this.start;
    const need = leftover + chunk.length;
    // Never overwrite bytes that earlier frames' bodies may still view: always move into a fresh buffer.
    const next = Buffer.allocUnsafe(Math.max(need, Math.min(2 * need, need + 1024 * 1024)));
    this.buf.copy(next, 0, this.start, this.end);
    chunk.copy(next, leftover);
    this.buf = next;
    this.start = 0;
    this.end = need;
  }
}

/** Decodes one frame without its leading length field. */
export function decodeFrameBody(frame: Buffer): RemotingCommand {
  if (frame.length < 4) throw new FrameError('frame shorter than its header length field');
  const word = frame.readUInt32BE(0);
  const serType = word >>> 24;
  const headerLen = word & 0xffffff;
  if (headerLen > frame.length - 4 || headerLen > MAX_HEADER_BYTES) {
    throw new FrameError(`header length ${headerLen} exceeds frame length ${frame.length - 4}`);
  }
  const header = frame.subarray(4, 4 + headerLen);
  let cmd: RemotingCommand;
  if (serType === SERIALIZE_JSON) cmd = decodeJsonHeader(header);
  else if (serType === SERIALIZE_ROCKETMQ) cmd = decodeBinaryHeader(header);
  else throw new FrameError(`unknown serialize type ${serType}`);
  const bodyLen = frame.length - 4 - headerLen;
  if (bodyLen > 0) cmd.body = frame.subarray(4 + headerLen);
  return cmd;
}
