import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { clientManageProcessors } from '../../src/broker/processors/client-manage.js';
import { consumerListProcessors } from '../../src/broker/processors/consumer-list.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { type RemotingCommand, createRequest } from '../../src/remoting/command.js';
import { Connection, DEFAULT_CONNECTION_LIMITS } from '../../src/remoting/connection.js';
import { RequestDispatcher } from '../../src/remoting/dispatcher.js';
import { RemotingServer } from '../../src/remoting/server.js';
import { javaHeartbeat, logger, makeContext } from './helpers.js';

interface TestClient {
  conn: Connection;
  incoming: RemotingCommand[];
  waitIncoming(n: number): Promise<void>;
}

async function connect(port: number): Promise<TestClient> {
  const socket = net.connect({ host: '127.0.0.1', port });
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const incoming: RemotingCommand[] = [];
  const waiters: Array<() => void> = [];
  const conn = new Connection(
    socket,
    (c, cmd) => {
      incoming.push(cmd);
      c.requestDone();
      for (const w of waiters.splice(0)) w();
    },
    logger,
    { ...DEFAULT_CONNECTION_LIMITS, idleTimeoutMs: 0 },
  );
  return {
    conn,
    incoming,
    async waitIncoming(n) {
      while (incoming.length < n) await new Promise<void>((r) => waiters.push(r));
    },
  };
}

const closers: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of closers.splice(0)) await c();
});

describe('client management over real connections', () => {
  it('notifies members on join and on disconnect, and forgets closed connections', async () => {
    const t = makeContext();
    const server = new RemotingServer(logger, new RequestDispatcher(logger));
    server.dispatcher.registerTable(clientManageProcessors(t.ctx));
    server.dispatcher.registerTable(consumerListProcessors(t.ctx));
    const port = await server.listen(0, '127.0.0.1');
    closers.push(() => server.close());

    const a = await connect(port);
    const b = await connect(port);
    closers.push(() => a.conn.close(), () => b.conn.close());

    const hb = (id: string) => createRequest(RequestCode.HEART_BEAT, {}, javaHeartbeat(id, 'G', ['T']));
    expect((await a.conn.request(hb('cid-a'), 3000)).code).toBe(ResponseCode.SUCCESS);
    await a.waitIncoming(1);
    expect((await b.conn.request(hb('cid-b'), 3000)).code).toBe(ResponseCode.SUCCESS);
    await a.waitIncoming(2);
    expect(a.incoming.map((c) => [c.code, c.extFields.consumerGroup, c.flag & 2])).toEqual([
      [40, 'G', 2],
      [40, 'G', 2],
    ]);

    const list = await a.conn.request(createRequest(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { consumerGroup: 'G' }), 3000);
    expect(JSON.parse(list.body!.toString()).consumerIdList.sort()).toEqual(['cid-a', 'cid-b']);

    b.conn.close();
    await a.waitIncoming(3);
    expect(a.incoming[2].code).toBe(40);
    expect(t.ctx.consumerManager.getAllClientIds('G')).toEqual(['cid-a']);
  });
});
