#!/usr/bin/env node
// Picks a handful of frames out of a capture-proxy JSON-lines file and writes protocol/vectors/<name>.json files
// of the form {"source": "...", "direction": "...", "frameHex": "..."}.
//
//   node extract-vectors.mjs FRAMES.jsonl OUTDIR "SOURCE DESCRIPTION"
//
// A request is matched to its response by (map, connection, opaque) and the response flag bit.
import fs from 'node:fs';
import path from 'node:path';

const [file, outDir, source] = process.argv.slice(2);
if (!file || !outDir || !source) {
  process.stderr.write('usage: extract-vectors.mjs FRAMES.jsonl OUTDIR "SOURCE"\n');
  process.exit(2);
}
const frames = fs.readFileSync(file, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const isResponse = (f) => (f.flag & 1) === 1;
const requests = frames.filter((f) => !isResponse(f));

function responseTo(req) {
  return frames.find((f) => isResponse(f) && f.map === req.map && f.conn === req.conn && f.opaque === req.opaque
    && f.dir !== req.dir && f.ms >= req.ms);
}

const who = { nsb: ['broker', 'namesrv'], nsc: ['client', 'namesrv'], broker: ['client', 'broker'] };
function direction(f) {
  const [a, b] = who[f.map] ?? ['client', 'server'];
  return f.dir === 'c2s' ? `${a}->${b}` : `${b}->${a}`;
}

let written = 0;
function write(name, f, note) {
  if (!f) {
    process.stderr.write(`extract-vectors: no frame for ${name}\n`);
    return;
  }
  const v = { source: `${source}; ${note}`, direction: direction(f), frameHex: f.frameHex };
  fs.writeFileSync(path.join(outDir, `${name}.json`), JSON.stringify(v, null, 2) + '\n');
  written++;
  process.stdout.write(`${name}.json  ${direction(f)} code=${f.code} opaque=${f.opaque} bytes=${f.frameHex.length / 2}\n`);
}

/** first request matching pred (optionally also requiring its response to match rpred) */
function pick(pred, rpred) {
  for (const r of requests) {
    if (!pred(r)) continue;
    const resp = responseTo(r);
    if (rpred && !(resp && rpred(resp))) continue;
    return [r, resp];
  }
  return [null, null];
}

const ext = (f, k) => f?.header?.extFields?.[k];
fs.mkdirSync(outDir, { recursive: true });

// SEND_MESSAGE_V2 (310) with its SUCCESS response
let [req, resp] = pick((f) => f.code === 310 && f.map === 'broker' && (f.flag & 2) === 0, (r) => r.code === 0);
write('java-send-message-v2-request', req, `SEND_MESSAGE_V2 (310) request, topic ${ext(req, 'b')}`);
write('java-send-message-v2-response', resp, 'SUCCESS response to the SEND_MESSAGE_V2 request (same opaque)');

// PULL_MESSAGE (11) whose response is FOUND (0) with a record body
[req, resp] = pick((f) => f.code === 11 && f.map === 'broker', (r) => r.code === 0 && r.bodyLength > 0);
write('java-pull-message-request', req, `PULL_MESSAGE (11) request, topic ${ext(req, 'topic')} queue ${ext(req, 'queueId')} offset ${ext(req, 'queueOffset')}`);
write('java-pull-message-response-found', resp, 'FOUND (0) response to that PULL_MESSAGE with stored-record body');

// PULL_MESSAGE answered with PULL_NOT_FOUND (19) after long polling (nothing new)
[req, resp] = pick((f) => f.code === 11 && f.map === 'broker', (r) => r.code === 19);
write('java-pull-message-response-not-found', resp, `PULL_NOT_FOUND (19) response to a long-polling PULL_MESSAGE (request sysFlag ${ext(req, 'sysFlag')})`);

// HEART_BEAT (34) from a consumer (consumerDataSet non-empty), and its response
[req, resp] = pick((f) => f.code === 34 && f.map === 'broker' && f.bodyLength > 0
  && Buffer.from(f.frameHex, 'hex').toString('utf8').includes('"consumerDataSet":[{'));
write('java-heart-beat-request', req, 'HEART_BEAT (34) request from a push consumer (body = HeartbeatData JSON)');
write('java-heart-beat-response', resp, 'response to that HEART_BEAT');

// GET_ROUTEINFO_BY_TOPIC (105) for a scenario topic with a route, and its response (as the namesrv sent it)
[req, resp] = pick((f) => f.code === 105 && f.map === 'nsc' && /^ct_/.test(ext(f, 'topic') ?? ''), (r) => r.code === 0);
write('java-get-routeinfo-by-topic-request', req, `GET_ROUTEINFO_BY_TOPIC (105) request for ${ext(req, 'topic')}`);
write('java-get-routeinfo-by-topic-response', resp, 'SUCCESS response (TopicRouteData body), bytes exactly as the namesrv sent them');
[req, resp] = pick((f) => f.code === 105 && f.map === 'nsc' && /^ct_/.test(ext(f, 'topic') ?? ''), (r) => r.code === 17);
write('java-get-routeinfo-by-topic-response-topic-not-exist', resp, `TOPIC_NOT_EXIST (17) response to GET_ROUTEINFO_BY_TOPIC for the not-yet-created ${ext(req, 'topic')}`);

// REGISTER_BROKER (103) from the broker to the namesrv, and the namesrv's response
[req, resp] = pick((f) => f.code === 103 && f.map === 'nsb', (r) => r.code === 0);
write('broker-register-broker-request', req, 'REGISTER_BROKER (103) request from the broker to the namesrv (first registration)');
write('broker-register-broker-response', resp, 'response to that REGISTER_BROKER');

// a few more that are cheap to have
[req, resp] = pick((f) => f.code === 320 && f.map === 'broker', (r) => r.code === 0);
write('java-send-batch-message-request', req, 'SEND_BATCH_MESSAGE (320) request');
write('java-send-batch-message-response', resp, 'SUCCESS response to SEND_BATCH_MESSAGE');
[req, resp] = pick((f) => f.code === 38 && f.map === 'broker', (r) => r.code === 0);
write('java-get-consumer-list-by-group-request', req, 'GET_CONSUMER_LIST_BY_GROUP (38) request');
write('java-get-consumer-list-by-group-response', resp, 'response to GET_CONSUMER_LIST_BY_GROUP');
[req, resp] = pick((f) => f.code === 14 && f.map === 'broker');
write('java-query-consumer-offset-request', req, 'QUERY_CONSUMER_OFFSET (14) request of a new group');
write('java-query-consumer-offset-response', resp, `response to QUERY_CONSUMER_OFFSET (code ${resp?.code})`);
[req] = pick((f) => f.code === 15 && f.map === 'broker');
write('java-update-consumer-offset-request', req, `UPDATE_CONSUMER_OFFSET (15) request (flag ${req?.flag})`);
[req] = pick((f) => f.code === 40 && f.map === 'broker');
write('broker-notify-consumer-ids-changed-request', req, 'NOTIFY_CONSUMER_IDS_CHANGED (40) oneway request from the broker to a consumer');

process.stdout.write(`${written} vectors written to ${outDir}\n`);
