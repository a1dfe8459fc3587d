// The classic HA port (raw TCP, no remoting frames), identical in 4.9.8 and 5.3.3 (Java store/ha/HAService,
// HAConnection, HAClient; 5.3.3 DefaultHAService, DefaultHAConnection, DefaultHAClient):
//
//   slave → master   report  | int64 offset |              the end of the slave's log; the first one on a
//                                                          connection is where the master starts, every one is
//                                                          an ack. Sent after appends and as a heartbeat.
//   master → slave   frame   | int64 offset | int32 size | size bytes of the master's commit log from offset
//                                                          (size 0: heartbeat; a frame never crosses a file)
//
// No handshake in either direction; integers are big-endian. Both readers take bytes as TCP delivers them.

export const REPORT_BYTES = 8;
export const FRAME_HEADER_BYTES = 12;
/** An official slave reads frames into a 4 MiB buffer (HAClient.READ_MAX_BUFFER_SIZE): larger ones never complete. */
export const MAX_FRAME_BODY_BYTES = 4 * 1024 * 1024 - FRAME_HEADER_BYTES;

/** An int64 as a JS number; NaN when it is not a safe integer (far beyond any offset). */
export function readOffset(buf: Buffer, pos: number): number {
  const hi = buf.readInt32BE(pos);
  const lo = buf.readUInt32BE(pos + 4);
  const v = hi * 4294967296 + lo;
  return Number.isSafeInteger(v) ? v : Number.NaN;
}

export function encodeReport(offset: number): Buffer {
  const b = Buffer.allocUnsafe(REPORT_BYTES);
  b.writeBigInt64BE(BigInt(offset), 0);
  return b;
}

export function encodeFrameHeader(offset: number, bodyBytes: number): Buffer {
  const b = Buffer.allocUnsafe(FRAME_HEADER_BYTES);
  b.writeBigInt64BE(BigInt(offset), 0);
  b.writeInt32BE(bodyBytes, 8);
  return b;
}

/**
 * The master's side: every complete 8-byte report, in order (Java keeps only the last aligned one per read; a
 * well-behaved slave never sends more than one at a time, and checking each is stricter). `onReport` returns false
 * to stop (the connection is being closed).
 */
export class ReportReader {
  private readonly partial = Buffer.alloc(REPORT_BYTES);
  private have = 0;

  push(chunk: Buffer, onReport: (offset: number) => boolean): void {
    let i = 0;
    if (this.have > 0) {
      const n = Math.min(REPORT_BYTES - this.have, chunk.length);
      chunk.copy(this.partial, this.have, 0, n);
      this.have += n;
      i = n;
      if (this.have < REPORT_BYTES) return;
      this.have = 0;
      if (!onReport(readOffset(this.partial, 0))) return;
    }
    for (; i + REPORT_BYTES <= chunk.length; i += REPORT_BYTES) {
      if (!onReport(readOffset(chunk, i))) return;
    }
    if (i < chunk.length) {
      chunk.copy(this.partial, 0, i);
      this.have = chunk.length - i;
    }
  }

  /** Bytes of an unfinished report. */
  get pendingBytes(): number {
    return this.have;
  }
}

export interface FrameHandler {
  /** The header arrived (the body may not have yet): false stops reading (Java checks the offset right here). */
  onHeader(offset: number, bodyBytes: number): boolean;
  /**
   * A whole frame; `body` is its bytes as views of the chunks TCP delivered them in (one view when they came in one
   * chunk; Node never reuses a chunk, so the views stay valid). False stops reading.
   */
  onFrame(offset: number, body: readonly Buffer[]): boolean;
}

/**
 * The slave's side: headers and bodies cut anywhere by TCP. Bodies are handed on as views of the chunks, never
 * joined (the slave copies them once, into its log). A header announcing a negative size, more than
 * `maxBodyBytes`, or an offset that is not a safe integer is reported through `onBadHeader` and stops reading.
 */
export class FrameReader {
  private readonly header = Buffer.alloc(FRAME_HEADER_BYTES);
  private headerHave = 0;
  /** Views of the body received so far (null between frames) and the size the header announced. */
  private body: Buffer[] | null = null;
  private bodyBytes = 0;
  private bodyHave = 0;
  private offset = 0;
  private stopped = false;

  constructor(
    private readonly maxBodyBytes: number,
    private readonly onBadHeader: (reason: string) => void,
  ) {}

  push(chunk: Buffer, h: FrameHandler): void {
    let i = 0;
    while (!this.stopped && i < chunk.length) {
      if (this.body === null) {
        const n = Math.min(FRAME_HEADER_BYTES - this.headerHave, chunk.length - i);
        chunk.copy(this.header, this.headerHave, i, i + n);
        this.headerHave += n;
        i += n;
        if (this.headerHave < FRAME_HEADER_BYTES) return;
        this.headerHave = 0;
        const offset = readOffset(this.header, 0);
        const size = this.header.readInt32BE(8);
        if (!(offset >= 0) || size < 0 || size > this.maxBodyBytes) {
          this.stopped = true;
          this.onBadHeader(`bad frame header: offset ${Number.isNaN(offset) ? 'out of range' : offset}, size ${size}`);
          return;
        }
        if (!h.onHeader(offset, size)) {
          this.stopped = true;
          return;
        }
        if (size === 0) {
          if (!h.onFrame(offset, [])) this.stopped = true;
          continue;
        }
        if (chunk.length - i >= size) {
          const view = chunk.subarray(i, i + size);
          i += size;
          if (!h.onFrame(offset, [view])) this.stopped = true;
          continue;
        }
        this.offset = offset;
        this.body = [];
        this.bodyBytes = size;
        this.bodyHave = 0;
      }
      const n = Math.min(this.bodyBytes - this.bodyHave, chunk.length - i);
      this.body.push(chunk.subarray(i, i + n));
      this.bodyHave += n;
      i += n;
      if (this.bodyHave === this.bodyBytes) {
        const body = this.body;
        this.body = null;
        if (!h.onFrame(this.offset, body)) this.stopped = true;
      }
    }
  }
}

