// Captures what a broker sends a transactional producer: the SEND_MESSAGE_V2 response for a half message and the
// CHECK_TRANSACTION_STATE (39) request that follows when the producer never ends the transaction.
//
//   npm run build && node protocol/transaction/capture.mjs BROKER_HOST:PORT OUT.json [waitSeconds=200]
//
// Acts as a bare producer over src/remoting (dist/): HEART_BEAT with producer group pg_capture, one half message
// to topic TxCapture (auto-created from TBW102), then waits for the check and answers it with ROLLBACK.
import fs from 'node:fs';
import net from 'node:net';
import { createRequest } from '../../dist/remoting/command.js';
import { Connection, DEFAULT_CONNECTION_LIMITS } from '../../dist/remoting/connection.js';
import { silentLogger } from '../../dist/common/logger.js';

const [addr, out, waitArg] = process.argv.slice(2);
if (!addr || !out) {
  console.error('usage: capture.mjs HOST:PORT OUT.json [waitSeconds]');
  process.exit(2);
}
const waitMs = Number(waitArg ?? 200) * 1000;
const group = 'pg_capture';
const uniqKey = '7F0000010000000000000000000000AA';
const props = `KEYS\u0001capture-key\u0002TAGS\u0001TagA\u0002WAIT\u0001true\u0002TRAN_MSG\u0001true\u0002PGROUP\u0001${group}\u0002UNIQ_KEY\u0001${uniqKey}\u0002`;

const idx = addr.lastIndexOf(':');
const socket = net.connect({ host: addr.slice(0, idx), port: Number(addr.slice(idx + 1)) });
await new Promise((resolve, reject) => {
  socket.once('connect', resolve);
  socket.once('error', reject);
});
let onCheck;
const checkArrived = new Promise((resolve) => (onCheck = resolve));
const conn = new Connection(
  socket,
  (c, cmd) => {
    c.requestDone();
    if (cmd.code === 39) onCheck(cmd);
  },
  silentLogger(),
  { ...DEFAULT_CONNECTION_LIMITS, idleTimeoutMs: 0 },
);
const heartbeat = Buffer.from(`{"clientID":"127.0.0.1@capture","consumerDataSet":[],"producerDataSet":[{"groupName":"${group}"}]}`);
const hb = await conn.request(createRequest(34, {}, heartbeat), 5000);
if (hb.code !== 0) throw new Error(`heartbeat: ${hb.code} ${hb.remark}`);
const keepAlive = setInterval(() => void conn.request(createRequest(34, {}, heartbeat), 5000).catch(() => undefined), 20_000);

const send = await conn.request(
  createRequest(
    310,
    { a: group, b: 'TxCapture', c: 'TBW102', d: '4', e: '0', f: '4', g: String(Date.now()), h: '0', i: props, j: '0', k: 'false', l: '16' },
    Buffer.from('capture body'),
  ),
  10_000,
);
console.error(`send: code ${send.code} ${JSON.stringify(send.extFields)}`);
if (send.code !== 0) process.exit(1);

const timer = setTimeout(() => {
  console.error(`no CHECK_TRANSACTION_STATE within ${waitMs / 1000}s`);
  process.exit(1);
}, waitMs);
const check = await checkArrived;
clearTimeout(timer);
clearInterval(keepAlive);
console.error(`check: ${JSON.stringify(check.extFields)}`);
conn.sendOneway(
  createRequest(37, {
    producerGroup: group,
    tranStateTableOffset: check.extFields.tranStateTableOffset,
    commitLogOffset: check.extFields.commitLogOffset,
    commitOrRollback: '12',
    fromTransactionCheck: 'true',
    msgId: uniqKey,
    transactionId: check.extFields.transactionId ?? uniqKey,
  }),
);
fs.writeFileSync(
  out,
  `${JSON.stringify(
    {
      capturedFrom: addr,
      halfSendResponse: { code: send.code, extFields: send.extFields },
      checkTransactionState: {
        code: check.code,
        flag: check.flag,
        language: check.language,
        version: check.version,
        extFields: check.extFields,
        bodyBase64: check.body ? check.body.toString('base64') : null,
      },
    },
    null,
    2,
  )}\n`,
);
setTimeout(() => {
  conn.close();
  process.exit(0);
}, 500);
