import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeProperties } from '../../src/common/message-properties.js';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { silentLogger } from '../../src/common/logger.js';
import { type RemotingCommand, createRequest, createResponse } from '../../src/remoting/command.js';
import { RemotingClient } from '../../src/remoting/client.js';
import { Connection } from '../../src/remoting/connection.js';
import { javaHeartbeat } from '../broker/helpers.js';
import { type TestServer, createTopic, startTestServer } from '../helpers/server.js';

const REQUESTER_ID = '127.0.0.1@slow-requester';

/**
 * Request-reply (SEND_REPLY_MESSAGE → PUSH_REPLY_MESSAGE_TO_CLIENT): the broker waits for the requester's answer
 * to the push as long as Java's Broker2Client.callClient (10 s). A requester that takes 4 s (a loaded JVM) must
 * still leave the responder with SUCCESS and receive the reply once; a shorter wait answered SYSTEM_ERROR, the
 * responder's send retry pushed the reply a second time, and the Java requester ran its callback twice.
 */
describe('request-reply push to a slow requester', () => {
  let server: TestServer;
  let responder: RemotingClient;
  let requester: Connection;
  const pushes: RemotingCommand[] = [];
  const answerDelayMs = 4000;

  beforeAll(async () => {
    server = await startTestServer();
    responder = new RemotingClient(silentLogger());
    await createTopic(server, 'ReplyTopic', 1);
    const [host, port] = [server.brokerAddr.slice(0, server.brokerAddr.lastIndexOf(':')), Number(server.brokerAddr.split(':').pop())];
    const socket = net.connect({ host, port });
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    requester = new Connection(
      socket,
      (conn, cmd) => {
        pushes.push(cmd);
        setTimeout(() => conn.write({ ...createResponse(ResponseCode.SUCCESS), opaque: cmd.opaque }), answerDelayMs);
      },
      silentLogger(),
    );
    const hb = await requester.request(createRequest(RequestCode.HEART_BEAT, {}, javaHeartbeat(REQUESTER_ID, '', [], ['PG_requester'])), 5000);
    expect(hb.code).toBe(ResponseCode.SUCCESS);
  });
  afterAll(async () => {
    requester?.close();
    await responder.close();
    await server.stop();
  });

  it('answers the responder SUCCESS once the requester accepted the push, and pushes it once', async () => {
    const properties = encodeProperties({
      CORRELATION_ID: 'corr-1',
      REPLY_TO_CLIENT: REQUESTER_ID,
      MSG_TYPE: 'reply',
    });
    const reply = createRequest(
      RequestCode.SEND_REPLY_MESSAGE,
      { producerGroup: 'PG_replier', topic: 'ReplyTopic', defaultTopic: 'TBW102', defaultTopicQueueNums: '4', queueId: '0',
        sysFlag: '0', bornTimestamp: String(Date.now()), flag: '0', properties },
      Buffer.from('reply to corr-1'),
    );
    const started = Date.now();
    const res = await responder.request(server.brokerAddr, reply, 15_000);
    expect(res.code, res.remark).toBe(ResponseCode.SUCCESS);
    expect(Date.now() - started).toBeGreaterThanOrEqual(answerDelayMs - 50);
    expect(pushes).toHaveLength(1);
    expect(pushes[0]!.code).toBe(RequestCode.PUSH_REPLY_MESSAGE_TO_CLIENT);
    expect(pushes[0]!.body?.toString()).toBe('reply to corr-1');
    expect(pushes[0]!.extFields.properties).toContain('corr-1');
  }, 30_000);
});
