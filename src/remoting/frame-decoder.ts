import { type RemotingCommand, SERIALIZE_JSON, SERIALIZE_ROCKETMQ } from './command.js';
import { FrameError, decodeBinaryHeader, decodeJsonHeader } from './header-codec.js';

/** Java NettyDecoder's default frameMaxLength: a frame (length field included) may not exceed 16 MiB. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Our own cap on a header: no legitimate header comes close. */
export const MAX_HEADER_BYTES = 1024 * 1024;

/**
 * Streaming frame decoder: feed it socket chunks, get whole commands back. Frames are decoded straight out of
 * the chunk when they fit; a partial frame's chunks are kept as a list and joined once, when the whole frame
 * is there, so a 4 MiB frame arriving in 64 KiB chunks is copied once, not once per chunk. A malformed frame
 * throws FrameError and the caller closes the connection.
 */
export class FrameDecoder {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes the frame at the head of `pending` needs (length field included), or 0 while unknown. */
  private needBytes = 0;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {}

  /** Bytes received but not yet decoded into a frame. */
  get bufferedBytes(): number {
    return this.pendingBytes;
  }

  push(chunk: Buffer, out: RemotingCommand[]): void {
    if (this.pendingBytes === 0) {
      this.decodeFrom(chunk, out);
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.needBytes === 0) {
      if (this.pendingBytes < 4) return;
      if (this.pending[0].length < 4) this.pending = [Buffer.concat(this.pending, this.pendingBytes)];
      this.needBytes = this.frameBytes(this.pending[0], 0);
    }
    if (this.pendingBytes < this.needBytes) return;
    const joined = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [];
    this.pendingBytes = 0;
    this.needBytes = 0;
    this.decodeFrom(joined, out);
  }

  /** Decodes every whole frame in `buf`; keeps the tail as pending. */
  private decodeFrom(buf: Buffer, out: RemotingCommand[]): void {
    let pos = 0;
    while (buf.length - pos >= 4) {
      const total = this.frameBytes(buf, pos);
      if (buf.length - pos < total) {
        this.needBytes = total;
        break;
      }
      out.push(decodeFrameBody(buf.subarray(pos + 4, pos + total)));
      pos += total;
    }
    if (pos < buf.length) {
      const rest = buf.subarray(pos);
      this.pending = [rest];
      this.pendingBytes = rest.length;
    }
  }

  /** Whole frame size (length field included) declared at `pos`; throws on an impossible length. */
  private frameBytes(buf: Buffer, pos: number): number {
    const length = buf.readInt32BE(pos);
    if (length < 4 || length + 4 > this.maxFrameBytes) {
      throw new FrameError(`frame length ${length} out of range (max ${this.maxFrameBytes - 4})`);
    }
    return length + 4;
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
