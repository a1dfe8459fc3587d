// grpc-js turns a client deadline into a setTimeout after truncating the milliseconds to int32: Java 5.x clients
// open Telemetry with a 60-year deadline (Java ClientImpl.TELEMETRY_TIMEOUT = 60 × 365 days, on the wire
// `grpc-timeout: 31536000M`), which truncates to a negative number, so grpc-js (1.14.7,
// server-interceptors.js handleTimeoutHeader) ends the stream with DEADLINE_EXCEEDED after 1 ms. A deadline beyond
// setTimeout's range is treated as none. Pinned grpc-js version; test/grpc/deadline.test.ts fails if this stops
// holding.
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

let patched = false;

export function patchGrpcJsDeadline(): void {
  if (patched) return;
  const mod = require('@grpc/grpc-js/build/src/server-interceptors.js') as {
    BaseServerInterceptingCall?: { prototype: { handleTimeoutHeader?: (header: string) => void } };
  };
  const proto = mod.BaseServerInterceptingCall?.prototype;
  const original = proto?.handleTimeoutHeader;
  if (!proto || typeof original !== 'function') {
    throw new Error('@grpc/grpc-js changed: BaseServerInterceptingCall.handleTimeoutHeader not found (see src/grpc/grpc-js-deadline.ts)');
  }
  proto.handleTimeoutHeader = function handleTimeoutHeader(this: unknown, header: string) {
    const m = /^(\d{1,8})\s*([HMSmun])$/.exec(String(header).trim());
    if (m && Number(m[1]) * UNIT_MS[m[2]] > MAX_TIMER_MS) return; // no deadline: the call's deadline stays Infinity
    original.call(this, header);
  };
  patched = true;
}
