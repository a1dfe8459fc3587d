import { type RemotingCommand, SERIALIZE_JSON, SERIALIZE_ROCKETMQ, isResponse, joinReceivedBody } from './command.js';
import { FrameError, decodeBinaryHeader, decodeJsonHeader } from './header-codec.js';

/** Java NettyDecoder's default frameMaxLength: a frame (length field included) may not exceed 16 MiB. */
export const MAX_FRAME_BYTES = 16 * 1024 * 1024;
/** Our own cap on a header: no legitimate header comes close. */
export const MAX_HEADER_BYTES = 1024 * 1024;

/** Size of the pieces a large partial frame is received into (see SlabPool). */
export const SLAB_BYTES = 1024 * 1024;
/** A cut frame from this size up to SLAB_BYTES is kept as views of the received chunks (no join copy). */
export const VIEW_MIN_FRAME_BYTES = 16 * 1024;
/** More pieces than this (tiny chunks) and a cut frame is copied into one buffer after all. */
export const MAX_VIEW_PARTS = 64;

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
 * decoded straight out of it (bodies stay views of the chunk). A cut frame of VIEW_MIN_FRAME_BYTES..SLAB_BYTES is
 * kept as views of the chunks it arrived in; once whole, a request's body is those views (receivedBodyParts,
 * when the decoder was made with keepBodyParts; the send path copies them into the commit log) and otherwise one
 * buffer joined from them. Smaller cut frames, and ones
 * that arrive in more than MAX_VIEW_PARTS chunks, are copied chunk by chunk into one buffer of the declared size —
 * or, with a SlabPool and a frame over SLAB_BYTES, into pooled pieces, joined once it is whole. `bufferedBytes`
 * (what the server's budget counts) is what the partial frame holds: the kept chunks whole, or the bytes copied.
 * A malformed frame throws FrameError and the caller closes the connection.
 */
export class FrameDecoder {
  /** The small frame being filled (length field included), allocated at its whole size; null between frames. */
  private frame: Buffer | null = null;
  /** The large frame being filled: its size and its pieces (from the pool). */
  private slabs: Buffer[] = [];
  private slabFrameBytes = 0;
  /** The cut frame kept as views of received chunks: its size (0 when none), the views, the chunks' whole sizes. */
  private viewFrameBytes = 0;
  private views: Buffer[] = [];
  private viewChunkBytes = 0;
  private filled = 0;
  /** A length field cut by a chunk boundary. */
  private readonly head = Buffer.alloc(4);
  private headBytes = 0;

  constructor(
    private readonly maxFrameBytes = MAX_FRAME_BYTES,
    private readonly pool?: SlabPool,
    /** Leave a cut request's body as receivedBodyParts (the server's connections) instead of joining it. */
    private readonly keepBodyParts = false,
  ) {}

  /** Bytes received but not yet decoded into a frame (a partial frame). */
  get bufferedBytes(): number {
    return (this.viewFrameBytes > 0 ? this.viewChunkBytes : this.filled) + this.headBytes;
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
      this.startPartial(this.frameBytes(this.head, 0), Buffer.from(this.head), 0, 4);
    }
    if (this.viewFrameBytes > 0) {
      const n = Math.min(this.viewFrameBytes - this.filled, chunk.length - pos);
      if (n > 0) this.addView(chunk, pos, pos + n);
      pos += n;
      if (this.viewFrameBytes > 0) {
        if (this.filled < this.viewFrameBytes) return;
        out.push(this.finishViews());
      }
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
    this.dropViews();
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
    if (total >= VIEW_MIN_FRAME_BYTES && total <= SLAB_BYTES) {
      this.viewFrameBytes = total;
      this.filled = 0;
      this.addView(src, from, to);
      return;
    }
    this.frame = Buffer.allocUnsafe(total);
    src.copy(this.frame, 0, from, to);
    this.filled = to - from;
  }

  /**
   * Keeps src[from, to) of the cut frame (counting all of src as held). Past MAX_VIEW_PARTS the views are copied
   * into one buffer of the frame's size and the frame goes on as a copied one.
   */
  private addView(src: Buffer, from: number, to: number): void {
    if (this.views.length >= MAX_VIEW_PARTS) {
      const frame = Buffer.allocUnsafe(this.viewFrameBytes);
      let at = 0;
      for (const v of this.views) at += v.copy(frame, at);
      at += src.copy(frame, at, from, to);
      this.dropViews();
      this.frame = frame;
      this.filled = at;
      return;
    }
    this.views.push(src.subarray(from, to));
    this.viewChunkBytes += src.length;
    this.filled += to - from;
  }

  private dropViews(): void {
    this.views = [];
    this.viewFrameBytes = 0;
    this.viewChunkBytes = 0;
  }

  /** The whole cut frame held as views, decoded: its body is the views (its header is joined if cut). */
  private finishViews(): RemotingCommand {
    const views = this.views;
    const total = this.viewFrameBytes;
    this.dropViews();
    this.filled = 0;
    const cmd = decodeFrameParts(views, total);
    if (!this.keepBodyParts || isResponse(cmd)) joinReceivedBody(cmd);
    return cmd;
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

/**
 * Decodes one frame (length field included) of `total` bytes given as pieces; the body stays pieces. When the
 * length field, header-length word and header are not all in the first piece (tiny chunks), the frame is joined.
 */
export function decodeFrameParts(parts: Buffer[], total: number): RemotingCommand {
  const first = parts[0]!;
  const headerLen = first.length >= 8 ? first.readUInt32BE(4) & 0xffffff : -1;
  if (headerLen < 0 || first.length < 8 + headerLen || headerLen > MAX_HEADER_BYTES) {
    return decodeFrameBody(Buffer.concat(parts, total).subarray(4));
  }
  const cmd = decodeFrameBody(first.subarray(4, 8 + headerLen));
  const body: Buffer[] = [];
  if (first.length > 8 + headerLen) body.push(first.subarray(8 + headerLen));
  for (let i = 1; i < parts.length; i++) body.push(parts[i]!);
  if (body.length === 1) cmd.body = body[0];
  else if (body.length > 1) cmd.receivedBodyParts = body;
  return cmd;
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
