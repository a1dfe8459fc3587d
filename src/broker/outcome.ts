// How services (send, pull, and later pop) answer "no" without knowing the transport: a response code (remoting's;
// the gRPC endpoint maps it as Java's proxy maps broker answers) and a remark a person can act on.

export interface Refusal {
  code: number;
  remark: string;
  /** Header fields the refusal carries (remoting), e.g. a pull's forbiddenType. */
  extFields?: Record<string, string>;
}

export function refusal(code: number, remark: string, extFields?: Record<string, string>): Refusal {
  return extFields ? { code, remark, extFields } : { code, remark };
}

export function isRefusal(v: unknown): v is Refusal {
  return typeof v === 'object' && v !== null && 'code' in v && 'remark' in v;
}
