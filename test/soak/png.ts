// A line chart as a PNG, with nothing but node:zlib: stacked panels (one per series) with a frame, grid, the
// series' line and its min / max / last values in a 5×7 bitmap font. For the soak's RSS, handles and latency.
import zlib from 'node:zlib';

type Rgb = readonly [number, number, number];

// 5×7 glyphs, one number per row (bit 4 = leftmost pixel).
const FONT: Record<string, readonly number[]> = {
  '0': [14, 17, 19, 21, 25, 17, 14], '1': [4, 12, 4, 4, 4, 4, 14], '2': [14, 17, 1, 2, 4, 8, 31],
  '3': [30, 1, 1, 14, 1, 1, 30], '4': [2, 6, 10, 18, 31, 2, 2], '5': [31, 16, 30, 1, 1, 17, 14],
  '6': [6, 8, 16, 30, 17, 17, 14], '7': [31, 1, 2, 4, 8, 8, 8], '8': [14, 17, 17, 14, 17, 17, 14],
  '9': [14, 17, 17, 15, 1, 2, 12], '.': [0, 0, 0, 0, 0, 12, 12], '-': [0, 0, 0, 14, 0, 0, 0], '/': [1, 1, 2, 4, 8, 16, 16],
  ':': [0, 12, 12, 0, 12, 12, 0], '%': [24, 25, 2, 4, 8, 19, 3], ' ': [0, 0, 0, 0, 0, 0, 0], '(': [2, 4, 8, 8, 8, 4, 2],
  ')': [8, 4, 2, 2, 2, 4, 8], ',': [0, 0, 0, 0, 12, 4, 8], '=': [0, 0, 31, 0, 31, 0, 0],
  A: [14, 17, 17, 31, 17, 17, 17], B: [30, 17, 17, 30, 17, 17, 30], C: [14, 17, 16, 16, 16, 17, 14],
  D: [28, 18, 17, 17, 17, 18, 28], E: [31, 16, 16, 30, 16, 16, 31], F: [31, 16, 16, 30, 16, 16, 16],
  G: [14, 17, 16, 23, 17, 17, 15], H: [17, 17, 17, 31, 17, 17, 17], I: [14, 4, 4, 4, 4, 4, 14],
  J: [7, 2, 2, 2, 2, 18, 12], K: [17, 18, 20, 24, 20, 18, 17], L: [16, 16, 16, 16, 16, 16, 31],
  M: [17, 27, 21, 21, 17, 17, 17], N: [17, 17, 25, 21, 19, 17, 17], O: [14, 17, 17, 17, 17, 17, 14],
  P: [30, 17, 17, 30, 16, 16, 16], Q: [14, 17, 17, 17, 21, 18, 13], R: [30, 17, 17, 30, 20, 18, 17],
  S: [15, 16, 16, 14, 1, 1, 30], T: [31, 4, 4, 4, 4, 4, 4], U: [17, 17, 17, 17, 17, 17, 14],
  V: [17, 17, 17, 17, 17, 10, 4], W: [17, 17, 17, 21, 21, 21, 10], X: [17, 17, 10, 4, 10, 17, 17],
  Y: [17, 17, 10, 4, 4, 4, 4], Z: [31, 1, 2, 4, 8, 16, 31],
};

export class Canvas {
  readonly pixels: Uint8Array;

  constructor(readonly width: number, readonly height: number, background: Rgb = [255, 255, 255]) {
    this.pixels = new Uint8Array(width * height * 3);
    for (let i = 0; i < width * height; i++) this.pixels.set(background, i * 3);
  }

  set(x: number, y: number, c: Rgb): void {
    const xi = Math.round(x);
    const yi = Math.round(y);
    if (xi < 0 || yi < 0 || xi >= this.width || yi >= this.height) return;
    this.pixels.set(c, (yi * this.width + xi) * 3);
  }

  line(x0: number, y0: number, x1: number, y1: number, c: Rgb): void {
    const steps = Math.max(1, Math.ceil(Math.max(Math.abs(x1 - x0), Math.abs(y1 - y0))));
    for (let i = 0; i <= steps; i++) this.set(x0 + ((x1 - x0) * i) / steps, y0 + ((y1 - y0) * i) / steps, c);
  }

  /** Text at (x, y) = top left, 2 px per font pixel. Unknown characters are blank. */
  text(x: number, y: number, s: string, c: Rgb, scale = 2): void {
    let cx = x;
    for (const ch of s.toUpperCase()) {
      const rows = FONT[ch] ?? FONT[' ']!;
      for (let r = 0; r < 7; r++) {
        for (let b = 0; b < 5; b++) {
          if (!(rows[r]! & (16 >> b))) continue;
          for (let dy = 0; dy < scale; dy++) for (let dx = 0; dx < scale; dx++) this.set(cx + b * scale + dx, y + r * scale + dy, c);
        }
      }
      cx += 6 * scale;
    }
  }

  png(): Buffer {
    const raw = Buffer.alloc((this.width * 3 + 1) * this.height);
    for (let y = 0; y < this.height; y++) {
      raw[y * (this.width * 3 + 1)] = 0; // filter: none
      Buffer.from(this.pixels.buffer, y * this.width * 3, this.width * 3).copy(raw, y * (this.width * 3 + 1) + 1);
    }
    const ihdr = Buffer.alloc(13);
    ihdr.writeUInt32BE(this.width, 0);
    ihdr.writeUInt32BE(this.height, 4);
    ihdr.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter method extras, no interlace
    return Buffer.concat([
      Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      chunk('IHDR', ihdr), chunk('IDAT', zlib.deflateSync(raw)), chunk('IEND', Buffer.alloc(0)),
    ]);
  }
}

function chunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(Buffer.concat([head.subarray(4), data])) >>> 0, 0);
  return Buffer.concat([head, data, crc]);
}

export interface Series {
  title: string;
  /** [seconds since start, value] */
  points: ReadonlyArray<readonly [number, number]>;
  color?: Rgb;
}

function fmt(v: number): string {
  if (!Number.isFinite(v)) return '-';
  if (Math.abs(v) >= 100) return String(Math.round(v));
  return v.toFixed(Math.abs(v) >= 10 ? 1 : 2);
}

/** Stacked panels, one per series, sharing the time axis; `title` goes on top. */
export function lineChart(title: string, series: readonly Series[], panelHeight = 200, width = 1000): Buffer {
  const top = 40;
  const left = 80;
  const right = 20;
  const gap = 50;
  const canvas = new Canvas(width, top + series.length * (panelHeight + gap), [255, 255, 255]);
  canvas.text(left, 10, title, [0, 0, 0]);
  const tMax = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[0])));
  series.forEach((s, i) => {
    const y0 = top + i * (panelHeight + gap) + 24;
    const h = panelHeight - 24;
    const w = width - left - right;
    const values = s.points.map((p) => p[1]);
    const vMax = Math.max(1e-9, ...values) * 1.1;
    const color = s.color ?? [20, 90, 200];
    canvas.text(left, y0 - 22, `${s.title}  MIN ${fmt(Math.min(...values))}  MAX ${fmt(Math.max(...values))}  LAST ${fmt(values.at(-1) ?? NaN)}`, [0, 0, 0]);
    for (let g = 0; g <= 4; g++) {
      const gy = y0 + h - (h * g) / 4;
      canvas.line(left, gy, left + w, gy, [225, 225, 225]);
      canvas.text(4, gy - 7, fmt((vMax * g) / 4), [90, 90, 90]);
    }
    canvas.line(left, y0, left, y0 + h, [0, 0, 0]);
    canvas.line(left, y0 + h, left + w, y0 + h, [0, 0, 0]);
    canvas.text(left + w - 150, y0 + h + 6, `${Math.round(tMax)} S`, [90, 90, 90]);
    let prev: [number, number] | null = null;
    for (const [t, v] of s.points) {
      const px = left + (w * t) / tMax;
      const py = y0 + h - (h * v) / vMax;
      if (prev) canvas.line(prev[0], prev[1], px, py, color);
      prev = [px, py];
    }
  });
  return canvas.png();
}
