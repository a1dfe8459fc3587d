// The transport-independent dispatcher: table lookup, error mapping, and the hook chain around every request.
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/common/logger.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { HeaderError, type RemotingCommand, createResponse } from '../../src/remoting/command.js';
import { MAX_REMARK_CHARS, type RequestContext, RequestDispatcher, sameProcessor } from '../../src/remoting/dispatcher.js';
import { FakeConnection } from '../broker/helpers.js';

const ctx: RequestContext = { channel: new FakeConnection() };
const req = (code: number): RemotingCommand => ({ code, language: 'JAVA', version: 0, opaque: 7, flag: 0, extFields: {} });

describe('request dispatcher', () => {
  it('answers unknown codes with REQUEST_CODE_NOT_SUPPORTED and maps thrown errors to SYSTEM_ERROR', async () => {
    const d = new RequestDispatcher(silentLogger());
    d.registerTable([
      [1, () => { throw new HeaderError('the custom field <topic> is null'); }],
      [2, async () => { throw new Error('boom'); }],
      ...sameProcessor([3, 4], () => createResponse(0, 'ok')),
    ]);
    expect((d.dispatch(req(99), ctx) as RemotingCommand).code).toBe(ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    const header = d.dispatch(req(1), ctx) as RemotingCommand;
    expect([header.code, header.remark]).toEqual([ResponseCode.SYSTEM_ERROR, 'request code 1: the custom field <topic> is null']);
    const thrown = await d.dispatch(req(2), ctx);
    expect(thrown?.code).toBe(ResponseCode.SYSTEM_ERROR);
    // The error's own text (a JS message, maybe a file path) stays in the log; the remark says where to look.
    expect(thrown?.remark).toMatch(/^internal error handling request code 2; the broker logged it as errorId \d+$/);
    expect((d.dispatch(req(4), ctx) as RemotingCommand).remark).toBe('ok');
    expect(d.serves(3) && d.serves(4) && !d.serves(5)).toBe(true);
  });

  it('caps every remark, sync or async, from a processor or a hook', async () => {
    const d = new RequestDispatcher(silentLogger());
    const long = 'x'.repeat(140_140);
    d.register(1, () => createResponse(1, long));
    d.register(2, async () => createResponse(1, long));
    d.register(3, () => createResponse(0, 'short'));
    for (const res of [d.dispatch(req(1), ctx) as RemotingCommand, (await d.dispatch(req(2), ctx))!]) {
      expect(res.remark!.length).toBeLessThanOrEqual(MAX_REMARK_CHARS);
      expect(res.remark).toMatch(/… \(139\d{3} more characters\)$/);
    }
    expect((d.dispatch(req(3), ctx) as RemotingCommand).remark).toBe('short');
    d.addHook({ before: (r) => (r.code === 3 ? createResponse(1, long) : undefined) });
    expect((d.dispatch(req(3), ctx) as RemotingCommand).remark!.length).toBeLessThanOrEqual(MAX_REMARK_CHARS);
  });

  it('runs hooks around sync and async processors; a hook that answers skips the processor', async () => {
    const d = new RequestDispatcher(silentLogger());
    const seen: string[] = [];
    let ran = 0;
    d.register(10, () => { ran++; return createResponse(0); });
    d.register(11, async () => { ran++; return createResponse(0, 'later'); });
    d.addHook({
      before: (r) => (r.code === 10 && r.extFields.deny ? createResponse(ResponseCode.NO_PERMISSION, 'denied') : undefined),
      after: (r, res) => seen.push(`${r.code}:${res?.code}`),
    });
    d.addHook({ before: () => { throw new Error('a broken hook is logged and ignored'); } });
    expect((d.dispatch(req(10), ctx) as RemotingCommand).code).toBe(0);
    expect((await d.dispatch(req(11), ctx))?.remark).toBe('later');
    const denied = d.dispatch({ ...req(10), extFields: { deny: '1' } }, ctx) as RemotingCommand;
    expect(denied.code).toBe(ResponseCode.NO_PERMISSION);
    expect(ran).toBe(2);
    expect(seen).toEqual(['10:0', '11:0', `10:${ResponseCode.NO_PERMISSION}`]);
  });
});
