import { type RemotingCommand, SERIALIZE_JSON, SERIALIZE_ROCKETMQ } from './command.js';
import { FrameError, decodeBinaryHeader, decodeJsonHeader } from './header-codec.js';

/** Java NettyDecoder's default frameMaxLength: a frame (length field included) may not exceed 16 MiB. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Our own cap on a header: no legitimate header comes close. */
export const MAX_HEADER_BYTES = 1024 * 1024;

/** Size of the pieces a large partial frame is received into (see SlabPool). */
export const SLAB_BYTES = 1024 * 1024;

/**
 * Reusable 1 MiB pieces for large partial frames, shared by a server's connections. A frame a peer never finishes
 * is dropped by closing its connection, and its pieces come back here at once: a dropped frame is not garbage that
 * stays resident until the next GC (8 stalled 16 MiB frames once kept 128 MiB alive past the budget that dropped
 * them). Keeps at most `maxFree` pieces; more are left to the GC.
 */
export class SlabPool {
  private readonly free: Buffer[] = [];
  constructor(private readonly maxFree = 16) {}

  take(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(SLAB_BYTES);
  }

  give(slab: Buffer): void {
    if (this.free.length < this.maxFree) this.free.push(slab);
  }

  get freeBytes(): number {
    return this.free.length * SLAB_BYTES;
  }
}

/**
 * Streaming frame decoder: feed it socket chunks, get whole commands back. Frames that lie whole in a chunk are
 * decoded straight out of it (bodies stay views of the chunk). A frame cut by a chunk boundary is copied, chunk by
 * chunk, into one buffer of its declared size (each byte once; no list of chunks, no join; the socket's chunks are
 * not kept alive by a tail) — or, with a SlabPool and a frame over SLAB_BYTES, into pooled pieces, joined once it
 * is whole. `bufferedBytes` (what the server's budget counts) is what the partial frame holds. A malformed frame
 * throws FrameError and the caller closes the connection.
 */
export class FrameDecoder {
  /** The small frame being filled (length field included), allocated at its whole size; null between frames. */
  private frame: Buffer | null = null;
  /** The large frame being filled: its size and its pieces (from the pool). */
  private slabs: Buffer[] = [];
  private slabFrameBytes = 0;
  private filled = 0;
  /** A length field cut by a chunk boundary. */
  private readonly head = Buffer.alloc(4);
  private headBytes = 0;

  constructor(
    private readonly maxFrameBytes = MAX_FRAME_BYTES,
    private readonly pool?: SlabPool,
  ) {}

  /** Bytes received but not yet decoded into a frame (a partial frame). */
  get bufferedBytes(): number {
    return this.filled + this.headBytes;
  }

  push(chunk: Buffer, out: RemotingCommand[]): void {
    let pos = 0;
    if (this.headBytes > 0) {
      const n = Math.min(4 - this.headBytes, chunk.length);
      chunk.copy(this.head, this.headBytes, 0, n);
      this.headBytes += n;
      pos = n;
      if (this.headBytes < 4) return;
      this.headBytes = 0;
      this.startPartial(this.frameBytes(this.head, 0), this.head, 0, 4);
    }
    if (this.frame) {
      const frame = this.frame;
      const n = Math.min(frame.length - this.filled, chunk.length - pos);
      chunk.copy(frame, this.filled, pos, pos + n);
      this.filled += n;
      pos += n;
      if (this.filled < frame.length) return;
      this.frame = null;
      this.filled = 0;
      out.push(decodeFrameBody(frame.subarray(4)));
    } else if (this.slabFrameBytes > 0) {
      pos = this.fillSlabs(chunk, pos);
      if (this.filled < this.slabFrameBytes) return;
      out.push(decodeFrameBody(this.joinSlabs().subarray(4)));
    }
    while (chunk.length - pos >= 4) {
      const total = this.frameBytes(chunk, pos);
      const have = chunk.length - pos;
      if (have < total) {
        this.startPartial(total, chunk, pos, chunk.length);
        return;
      }
      out.push(decodeFrameBody(chunk.subarray(pos + 4, pos + total)));
      pos += total;
    }
    if (pos < chunk.length) {
      chunk.copy(this.head, 0, pos);
      this.headBytes = chunk.length - pos;
    }
  }

  /** Drops a partial frame (the connection closed), handing its pieces back to the pool. */
  release(): void {
    for (const slab of this.slabs) this.pool!.give(slab);
    this.slabs = [];
    this.slabFrameBytes = 0;
    this.frame = null;
    this.filled = 0;
    this.headBytes = 0;
  }

  /** A frame of `total` bytes whose first bytes are src[from, to). */
  private startPartial(total: number, src: Buffer, from: number, to: number): void {
    if (this.pool && total > SLAB_BYTES) {
      this.slabFrameBytes = total;
      this.filled = 0;
      this.fillSlabs(src.subarray(0, to), from);
      return;
    }
    this.frame = Buffer.allocUnsafe(total);
    src.copy(this.frame, 0, from, to);
    this.filled = to - from;
  }

  /** Copies chunk[pos…] into the pieces, up to the frame's end; returns the new position in the chunk. */
  private fillSlabs(chunk: Buffer, pos: number): number {
    while (pos < chunk.length && this.filled < this.slabFrameBytes) {
      const at = this.filled % SLAB_BYTES;
      if (at === 0 && this.filled / SLAB_BYTES >= this.slabs.length) this.slabs.push(this.pool!.take());
      const slab = this.slabs[this.slabs.length - 1]!;
      const n = Math.min(SLAB_BYTES - at, this.slabFrameBytes - this.filled, chunk.length - pos);
      chunk.copy(slab, at, pos, pos + n);
      this.filled += n;
      pos += n;
    }
    return pos;
  }

  /** The whole large frame in one buffer; its pieces go back to the pool. */
  private joinSlabs(): Buffer {
    const frame = Buffer.allocUnsafe(this.slabFrameBytes);
    let at = 0;
    for (const slab of this.slabs) {
      const n = Math.min(SLAB_BYTES, this.slabFrameBytes - at);
      slab.copy(frame, at, 0, n);
      at += n;
      this.pool!.give(slab);
    }
    this.slabs = [];
    this.slabFrameBytes = 0;
    this.filled = 0;
    return frame;
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
