// Seeded, structure-aware frame generator: mostly well-formed frames of known request codes whose header fields
// and bodies are valid or broken in the ways that matter (Java number corners, names, lengths, encodings), plus
// broken frames (lengths, serialize types, header encodings). The same seed gives the same frames.
import { RequestCode } from '../../src/common/request-code.js';
import { FLAG_ONEWAY, FLAG_RESPONSE } from '../../src/remoting/command.js';
import { CODES, type CodeSpec, type FieldType, NAMESRV_CODES, SAFE_LIVE_KEYS } from './schema.js';

/** xorshift128+-ish 32-bit generator: fast, seedable, good enough for choices. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number) {
    this.a = seed >>> 0 || 1;
    this.b = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) >>> 0 || 2;
    this.c = Math.imul(seed ^ 0xc2b2ae35, 0x27d4eb2f) >>> 0 || 3;
    this.d = 0x6c078965;
    for (let i = 0; i < 16; i++) this.u32();
  }

  u32(): number {
    const t = this.a ^ (this.a << 11);
    this.a = this.b;
    this.b = this.c;
    this.c = this.d;
    this.d = (this.d ^ (this.d >>> 19) ^ (t ^ (t >>> 8))) >>> 0;
    return this.d;
  }

  /** [0, n) */
  int(n: number): number {
    return Math.floor((this.u32() / 4294967296) * n);
  }

  chance(p: number): boolean {
    return this.u32() / 4294967296 < p;
  }

  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }

  bytes(n: number): Buffer {
    const b = Buffer.allocUnsafe(n);
    for (let i = 0; i < n; i++) b[i] = this.u32() & 0xff;
    return b;
  }
}

export interface FuzzFrame {
  bytes: Buffer;
  code: number;
  /** Which server the frame goes to. */
  target: 'broker' | 'namesrv';
  /** 'answer': a response or a close is due; 'none': oneway or a response-flagged frame; 'desync': the framing
   * lies (declared length), so the connection is dropped after it and nothing is awaited. */
  expect: 'answer' | 'none' | 'desync';
  /** The longest the answer may take (long polling, relays to clients). */
  answerWithinMs: number;
}

/**
 * The fuzzed topic the frames never delete, so the runner has one whose queues, written by every kind of fuzzed send
 * (flags, properties, delays, batches), it can read back whole at the end. Most runs delete the others.
 */
export const KEPT_TOPIC = 'FuzzT0';
const TOPICS = ['FuzzT0', 'FuzzT1', 'FuzzT2', 'FuzzT3', '%RETRY%FuzzG0', '%DLQ%FuzzG1', 'TBW102', 'SCHEDULE_TOPIC_XXXX',
  'RMQ_SYS_TRANS_HALF_TOPIC', 'rmq_sys_wheel_timer', 'DefaultCluster', 'broker-a', 'SELF_TEST_TOPIC'];
const GROUPS = ['FuzzG0', 'FuzzG1', 'FuzzG2', 'CID_RMQ_SYS_TRANS', 'TOOLS_CONSUMER'];
const BAD_NAMES = ['', ' ', '../../etc', 'a/b', 'a\\b', '.', '..', 'bad topic!', 'x'.repeat(128), 'y'.repeat(256),
  'z'.repeat(70_000), 'ünïcødé', '\u0000', 'a\u0001b\u0002', '%', '|', '-', 'T'.repeat(300)];
const INT_EDGES = ['0', '-1', '1', '7', '8', '2147483647', '-2147483648', '2147483648', '-2147483649', '', ' 1', '1 ',
  '1e3', '0x10', '+5', '-0', '\u0663', '\uff17', 'NaN', 'Infinity', '1.5', '9'.repeat(40), 'abc', '--1', '+'];
/**
 * fileReservedTime values for the config frames: the edges, but none of 0 and below, which are valid and make every
 * commit-log file due, so that a DELETE_EXPIRED_COMMITLOG among the frames deletes the check topic's messages on
 * purpose (seed 90417): the oracle would count an operator's deletion as loss.
 */
const RESERVED_TIME_EDGES = INT_EDGES.filter((v) => v.trim() === '' || !(Number(v) <= 0));
const LONG_EDGES = ['0', '-1', '1', '1700000000000', String(Date.now()), '9007199254740991', '9007199254740993',
  '9223372036854775807', '-9223372036854775808', '9223372036854775808', '-9223372036854775809', '1e21', '1e308', '',
  ' 5', '0x10', '1e3', '00000000000000000000001', '\u0661\u0662', '-0', '3.14'];
const PROPERTY_KEYS = ['TAGS', 'KEYS', 'UNIQ_KEY', 'DELAY', 'TIMER_DELIVER_MS', 'TIMER_DELAY_SEC', 'TIMER_DELAY_MS',
  'TRAN_MSG', 'PGROUP', 'REAL_TOPIC', 'REAL_QID', 'RETRY_TOPIC', 'MAX_OFFSET', 'MIN_OFFSET', 'WAIT', 'CLUSTER',
  'REPLY_TO_CLIENT', 'CORRELATION_ID', 'MSG_TYPE', 'TTL', 'TIMER_DEL_UNIQKEY', 'a', ''];

export class FrameGenerator {
  constructor(private readonly rng: Rng) {}

  /** One frame with the given opaque (the runner keeps opaques unique per connection). */
  next(opaque: number): FuzzFrame {
    const r = this.rng;
    const known = [...CODES.keys()];
    const code = r.chance(0.92) ? r.pick(known) : r.pick([0, -1, 9999, 32767, -32768, 65535, r.int(1000), 327]);
    const spec = CODES.get(code);
    const fields = this.fields(code, spec);
    const body = this.body(code, spec, fields);
    let flag = 0;
    if (r.chance(0.04)) flag |= FLAG_ONEWAY;
    if (r.chance(0.02)) flag |= FLAG_RESPONSE;
    if (r.chance(0.01)) flag = r.u32() | 0;
    const target: FuzzFrame['target'] = NAMESRV_CODES.has(code) ? 'namesrv' : 'broker';
    const header = r.chance(0.7)
      ? this.jsonHeader(code, opaque, flag, fields)
      : this.binaryHeader(code, opaque, flag, fields);
    const frame = this.frame(header.bytes, header.type, body);
    let expect: FuzzFrame['expect'] = (flag & (FLAG_ONEWAY | FLAG_RESPONSE)) !== 0 ? 'none' : 'answer';
    if (frame.desync) expect = 'desync';
    let answerWithinMs = 15_000;
    if (code === RequestCode.CONSUME_MESSAGE_DIRECTLY || code === RequestCode.GET_CONSUMER_RUNNING_INFO) answerWithinMs = 25_000;
    return { bytes: frame.bytes, code, target, expect, answerWithinMs };
  }

  // ---------------------------------------------------------------- header fields

  private fields(code: number, spec: CodeSpec | undefined): Record<string, string> {
    const r = this.rng;
    const out: Record<string, string> = {};
    const entries = spec ? Object.entries(spec.fields) : [];
    for (const [name, type] of entries) {
      if (r.chance(0.06)) continue; // missing
      out[name] = this.value(type, name);
    }
    if (code === RequestCode.PULL_MESSAGE || code === RequestCode.LITE_PULL_MESSAGE) this.boundSuspension(out);
    if (code === RequestCode.DELETE_TOPIC_IN_BROKER && out.topic === KEPT_TOPIC) out.topic = 'FuzzT1';
    if (r.chance(0.05)) out[r.pick(['x', 'zz', '', '\u0000', 'a'.repeat(300)])] = r.pick(['1', '', 'v'.repeat(1000)]);
    if (spec?.letters && r.chance(0.6)) {
      // SEND_MESSAGE_V2 style: the letters instead of the names.
      const lettered: Record<string, string> = {};
      for (const [k, v] of Object.entries(out)) lettered[spec.letters[k] ?? k] = v;
      return lettered;
    }
    return out;
  }

  /** A long poll is answered within its suspension: keep the ones the runner waits for short. */
  private boundSuspension(f: Record<string, string>): void {
    const sysFlag = Number(f.sysFlag);
    if (Number.isInteger(sysFlag) && (sysFlag & 2) !== 0) f.suspendTimeoutMillis = String(this.rng.int(1500));
  }

  private value(type: FieldType, name: string): string {
    const r = this.rng;
    switch (type) {
      case 'int':
        if (r.chance(0.75)) {
          if (name === 'queueId') return String(r.int(9) - 1);
          if (name === 'maxMsgNums' || name === 'maxNum') return String(1 + r.int(64));
          if (name === 'sysFlag') return String(r.pick([0, 2, 4, 6, 1, 7, 0x10, 0x80, 0x8]));
          if (name === 'perm') return String(r.pick([2, 4, 6, 7, 0, 15, 16]));
          if (name === 'readQueueNums' || name === 'writeQueueNums') return String(r.pick([1, 4, 8, 0, 16384, 16385, 100000]));
          if (name === 'commitOrRollback') return String(r.pick([0, 4, 8, 12, 3]));
          return String(r.int(20));
        }
        return r.pick(INT_EDGES);
      case 'long':
        if (r.chance(0.7)) {
          if (/Timestamp|timestamp/.test(name)) return String(Date.now() - r.int(3_600_000));
          return String(r.int(200));
        }
        return r.pick(LONG_EDGES);
      case 'bool':
        return r.pick(['true', 'false', 'TRUE', 'yes', '', '1']);
      case 'topic':
        return r.chance(0.8) ? r.pick(TOPICS) : r.pick(BAD_NAMES);
      case 'group':
        return r.chance(0.8) ? r.pick(GROUPS) : r.pick(BAD_NAMES);
      case 'properties':
        return this.properties();
      case 'msgId':
        return r.pick(['7F00000100002A9F0000000000000000', '7F00000100002A9F00000000000001F4', 'zz', '', 'AC1'.repeat(20)]);
      case 'addr':
        return r.pick(['127.0.0.1:10911', '127.0.0.1:1', 'nohost', ':', '[::1]:10911', '']);
      case 'clientId':
        return r.pick(['fuzz@1', 'fuzz@2', '', 'x'.repeat(500)]);
      case 'recallHandle': {
        // Mostly well formed (topic, broker, a time soon or at an edge, a key), so the checks after decoding run too.
        if (r.chance(0.3)) return r.pick(BAD_NAMES);
        const topic = r.chance(0.8) ? r.pick(TOPICS) : r.pick(BAD_NAMES);
        const at = r.chance(0.7) ? String(Date.now() + r.int(10_000) - 1000) : r.pick(LONG_EDGES);
        const text = ['v1', topic, r.pick(['broker-a', 'broker-z', '']), at, r.pick(['U1', 'U2', '', 'x'.repeat(300)])].join(' ');
        return Buffer.from(text).toString(r.chance(0.8) ? 'base64url' : 'base64');
      }
      default:
        return r.chance(0.7) ? r.pick(['*', 'TagA || TagB', 'a > 5', 'TAG', 'SQL92', 'FuzzG0', 'broker-a', 'DefaultCluster', 'k1'])
          : r.pick(BAD_NAMES);
    }
  }

  private properties(): string {
    const r = this.rng;
    let s = '';
    const n = r.int(6);
    for (let i = 0; i < n; i++) {
      const key = r.pick(PROPERTY_KEYS);
      const value = r.chance(0.5) ? r.pick(LONG_EDGES) : r.pick(['TagA', 'k1 k2', String(r.int(20)), 'true', 'FuzzT0', '', 'x'.repeat(r.int(3) * 200)]);
      s += `${key}\u0001${value}\u0002`;
    }
    if (r.chance(0.05)) s += r.pick(['\u0001', '\u0002\u0002', 'nokey', '\u0001\u0001\u0001', 'z'.repeat(40_000)]);
    return s;
  }

  // ---------------------------------------------------------------- bodies

  private body(code: number, spec: CodeSpec | undefined, fields: Record<string, string>): Buffer {
    const r = this.rng;
    const kind = spec?.body ?? r.pick(['none', 'message', 'json'] as const);
    if (r.chance(0.05)) return r.bytes(r.int(2000));
    switch (kind) {
      case 'none':
        return r.chance(0.9) ? Buffer.alloc(0) : r.bytes(r.int(64));
      case 'message':
        return this.messageBody();
      case 'batch':
        return this.batchBody();
      case 'heartbeat':
        return this.json({
          clientID: r.pick(['fuzz@1', 'fuzz@2', '', 7]),
          consumerDataSet: r.chance(0.8) ? [this.consumerData()] : r.pick([null, 'x', [null], {}]),
          producerDataSet: [{ groupName: this.value('group', 'g') }],
          heartbeatFingerprint: r.chance(0.8) ? 0 : r.pick(LONG_EDGES),
        });
      case 'lock':
        return this.json({
          consumerGroup: this.value('group', 'g'), clientId: r.pick(['fuzz@1', '', 3]),
          mqSet: [{ topic: this.value('topic', 't'), brokerName: 'broker-a', queueId: r.pick([0, 1, -1, '2', 'x', 1e300]) }],
          onlyThisBroker: r.chance(0.5),
        });
      case 'groupConfig':
        return this.json({
          groupName: this.value('group', 'groupName'), consumeEnable: true, retryQueueNums: r.pick([1, 0, -5, 100000, '2']),
          retryMaxTimes: r.pick([16, -1, 0, 2147483648]), brokerId: 0, whichBrokerWhenConsumeSlowly: 1,
          notifyConsumerIdsChangedEnable: r.chance(0.5), groupRetryPolicy: r.chance(0.5) ? {} : 'x',
        });
      case 'clientConfig':
        return this.json({
          clientId: 'fuzz@1', group: this.value('group', 'g'),
          subscriptionData: {
            topic: this.value('topic', 't'), subString: r.pick(['a > 5', 'a IN (1,2', 'TAGS = \'x\' AND b BETWEEN 1 AND 2', '((((((((((a', 'a'.repeat(5000), '*']),
            expressionType: r.pick(['SQL92', 'TAG', 'XX', '']), tagsSet: [], codeSet: [],
          },
        });
      case 'register':
        return this.json({
          topicConfigSerializeWrapper: {
            topicConfigTable: { [this.value('topic', 't')]: { topicName: 'FuzzT0', readQueueNums: r.pick([4, -1, 'x']), writeQueueNums: 4, perm: 6 } },
            dataVersion: { counter: r.pick([1, 'x', -1]), timestamp: Date.now() },
          },
          filterServerList: r.pick([[], null, 'x']),
        });
      case 'properties': {
        let text = '';
        const n = 1 + r.int(3);
        for (let i = 0; i < n; i++) {
          const safe = Object.keys(SAFE_LIVE_KEYS);
          if (r.chance(0.5)) {
            const key = r.pick(safe);
            text += `${key}=${r.pick(SAFE_LIVE_KEYS[key]!)}\n`;
          } else {
            // Refused: a restart-only key changed, a bad value, an unknown or black-listed key.
            text += r.pick(['mappedFileSizeCommitLog=1', 'brokerPermission=x', 'maxMessageSize=-1', 'flushDiskType=NOPE',
              'unknownKey=1', 'brokerConfigPath=/tmp/x', 'rocketmqHome=/', 'configBlackList=', 'listenPort=1', '=', 'x', '\u0000=1',
              'deleteWhen=99', `fileReservedTime=${r.pick(RESERVED_TIME_EDGES)}`]) + '\n';
          }
        }
        return Buffer.from(text);
      }
      default:
        if (r.chance(0.2)) return Buffer.from(this.deep(r.int(3) === 0 ? 100_000 : 50));
        return this.json(r.pick([{}, [], 'x', 1, null]));
    }
  }

  private consumerData(): unknown {
    const r = this.rng;
    return {
      groupName: this.value('group', 'groupName'), consumeType: r.pick(['CONSUME_PASSIVELY', 'CONSUME_ACTIVELY', 'X']),
      messageModel: r.pick(['CLUSTERING', 'BROADCASTING', 7]), consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
      subscriptionDataSet: [{
        topic: this.value('topic', 't'), subString: r.pick(['*', 'TagA || TagB', 'a > 1', '']), tagsSet: ['TagA'],
        codeSet: [r.pick([1, 'x', 1e300])], subVersion: r.pick([Date.now(), -1, 'x']), expressionType: r.pick(['TAG', 'SQL92', null]),
      }],
      unitMode: false,
    };
  }

  /** Nested arrays and objects: a parser that recurses must not overflow the stack. */
  private deep(depth: number): string {
    return this.rng.chance(0.5) ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
  }

  private json(v: unknown): Buffer {
    const r = this.rng;
    let text = JSON.stringify(v);
    if (r.chance(0.05)) text = text.slice(0, r.int(text.length + 1)); // truncated
    if (r.chance(0.03)) text = '['.repeat(100_000); // deeper than any sane parser recursion
    return Buffer.from(text);
  }

  private messageBody(): Buffer {
    const r = this.rng;
    const n = r.chance(0.97) ? r.int(4096) : r.pick([0, 4 * 1024 * 1024, 4 * 1024 * 1024 + 1]);
    return n > 65536 ? Buffer.alloc(n, 0x61) : r.bytes(n);
  }

  /** MessageDecoder.encodeMessages: TOTALSIZE MAGIC BODYCRC FLAG BODYLEN BODY PROPLEN PROPS, with lies. */
  private batchBody(): Buffer {
    const r = this.rng;
    const parts: Buffer[] = [];
    const count = r.chance(0.9) ? 1 + r.int(8) : r.pick([0, 200]);
    for (let i = 0; i < count; i++) {
      const body = r.bytes(r.int(200));
      const props = Buffer.from(this.properties());
      const total = 4 + 4 + 4 + 4 + 4 + body.length + 2 + props.length;
      const m = Buffer.alloc(total);
      m.writeInt32BE(r.chance(0.9) ? total : r.pick([0, -1, total + 1, 2 ** 31 - 1, 21]), 0);
      m.writeInt32BE(0, 4);
      m.writeInt32BE(0, 8);
      m.writeInt32BE(r.int(3), 12);
      m.writeInt32BE(r.chance(0.9) ? body.length : r.pick([-1, body.length + 10, 2 ** 31 - 1]), 16);
      body.copy(m, 20);
      m.writeInt16BE(r.chance(0.95) ? Math.min(props.length, 32767) : r.pick([-1, 32767]), 20 + body.length);
      props.copy(m, 22 + body.length);
      parts.push(m);
    }
    let out = Buffer.concat(parts);
    if (r.chance(0.05)) out = out.subarray(0, r.int(out.length + 1));
    return out;
  }

  // ---------------------------------------------------------------- headers and frames

  private jsonHeader(code: number, opaque: number, flag: number, fields: Record<string, string>): { bytes: Buffer; type: number } {
    const r = this.rng;
    const h: Record<string, unknown> = { code, language: r.pick(['JAVA', 'GO', 'NODE_JS', 'X', 5]), version: r.pick([399, 453, 0, -1]), opaque, flag, extFields: fields };
    if (r.chance(0.05)) h.remark = r.pick(['hi', 'x'.repeat(5000)]);
    if (r.chance(0.02)) h.extFields = r.pick([null, [], 'x', { a: { b: 1 } }, { n: 1, b: true, z: null }]);
    if (r.chance(0.01)) h.code = r.pick(['10', 1.5, null, 'x', 2 ** 40]);
    if (r.chance(0.005)) delete h.code;
    let text = JSON.stringify(h);
    if (r.chance(0.01)) text = r.pick([text.slice(0, r.int(text.length)), '{', '[]', 'null', `${text}}`, text.replace(/"/g, "'")]);
    return { bytes: Buffer.from(text), type: 0 };
  }

  /** RocketMQSerializable: code i16, language u8, version i16, opaque i32, flag i32, remark, extFields. */
  private binaryHeader(code: number, opaque: number, flag: number, fields: Record<string, string>): { bytes: Buffer; type: number } {
    const r = this.rng;
    const remark = r.chance(0.1) ? Buffer.from(r.pick(['r', 'x'.repeat(3000)])) : Buffer.alloc(0);
    const ext: Buffer[] = [];
    for (const [k, v] of Object.entries(fields)) {
      const kb = Buffer.from(k);
      const vb = Buffer.from(v);
      const e = Buffer.alloc(2 + kb.length + 4 + vb.length);
      e.writeInt16BE(r.chance(0.997) ? kb.length : r.pick([-1, kb.length + 3, 32767]), 0);
      kb.copy(e, 2);
      e.writeInt32BE(r.chance(0.997) ? vb.length : r.pick([-1, vb.length + 9, 2 ** 31 - 1]), 2 + kb.length);
      vb.copy(e, 6 + kb.length);
      ext.push(e);
    }
    const extBytes = Buffer.concat(ext);
    const h = Buffer.alloc(21 + remark.length + extBytes.length);
    h.writeInt16BE(((code << 16) >> 16), 0);
    h.writeUInt8(r.chance(0.9) ? r.pick([0, 1, 2, 10, 12]) : 255, 2);
    h.writeInt16BE(r.pick([399, 453, -1]), 3);
    h.writeInt32BE(opaque | 0, 5);
    h.writeInt32BE(flag | 0, 9);
    h.writeInt32BE(r.chance(0.99) ? remark.length : r.pick([-1, remark.length + 5, 2 ** 31 - 1]), 13);
    remark.copy(h, 17);
    h.writeInt32BE(r.chance(0.99) ? extBytes.length : r.pick([-1, extBytes.length + 1, 2 ** 31 - 1]), 17 + remark.length);
    extBytes.copy(h, 21 + remark.length);
    return { bytes: r.chance(0.005) ? h.subarray(0, r.int(h.length)) : h, type: 1 };
  }

  /** [length][type<<24 | headerLength][header][body], sometimes with lies in either length or the type. */
  private frame(header: Buffer, type: number, body: Buffer): { bytes: Buffer; desync: boolean } {
    const r = this.rng;
    const total = 4 + header.length + body.length;
    const prefix = Buffer.alloc(8);
    let declared = total;
    let desync = false;
    if (r.chance(0.005)) {
      declared = r.pick([0, 3, total - 1, total + 1, 16 * 1024 * 1024, -5, 2 ** 31 - 1]);
      desync = true;
    }
    prefix.writeInt32BE(declared | 0, 0);
    let headerWord = ((type & 0xff) << 24) | (header.length & 0xffffff);
    if (r.chance(0.005)) headerWord = r.pick([(2 << 24) | header.length, header.length + 7, 0xffffffff | 0, (1 << 24) | 0xffffff]);
    prefix.writeInt32BE(headerWord | 0, 4);
    return { bytes: Buffer.concat([prefix, header, body]), desync };
  }
}
