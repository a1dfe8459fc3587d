// The admin page: one HTML document with its script inline, no framework and no build step (tables, a form and an
// SVG line chart are all it draws). It polls /api/* every 2 s.
export const CONSOLE_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rocketmq-ts console</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:0;color:#1b1f24;background:#f6f7f9}
header{background:#1d3557;color:#fff;padding:10px 18px;display:flex;gap:18px;align-items:baseline}
header h1{font-size:18px;margin:0} header span{opacity:.8}
main{padding:12px 18px;display:grid;gap:14px}
section{background:#fff;border:1px solid #dde1e6;border-radius:6px;padding:10px 14px}
h2{font-size:15px;margin:0 0 8px}
table{border-collapse:collapse;width:100%} th,td{text-align:left;padding:3px 8px;border-bottom:1px solid #eef0f2;font-variant-numeric:tabular-nums}
th{font-weight:600;color:#555} td.num,th.num{text-align:right}
details summary{cursor:pointer} .muted{color:#888} .lag{color:#c1121f;font-weight:600}
svg{width:100%;height:160px;background:#fbfcfd;border:1px solid #eef0f2}
form{display:flex;gap:8px;flex-wrap:wrap} form input{padding:4px 6px;border:1px solid #ccd;border-radius:4px;min-width:220px}
button{padding:4px 12px} .legend span{display:inline-block;margin-right:14px} .in{color:#2a9d8f} .out{color:#e76f51}
pre{white-space:pre-wrap;word-break:break-all;margin:0;max-height:120px;overflow:auto;background:#f6f7f9;padding:4px}
</style></head>
<body>
<header><h1>rocketmq-ts</h1><span id="broker"></span><span id="updated" class="muted"></span></header>
<main>
<section><h2>Cluster</h2><table id="cluster"><thead><tr><th>Cluster</th><th>Broker</th><th class="num">Id</th><th>Role</th><th>Address</th></tr></thead><tbody></tbody></table><div id="cluster-error" class="lag"></div></section>
<section><h2>Message rates</h2><div class="legend"><span class="in">&#9632; in <b id="rate-in">0</b> msg/s (total <b id="put-total">0</b>)</span><span class="out">&#9632; out <b id="rate-out">0</b> msg/s (total <b id="get-total">0</b>)</span></div>
<svg id="chart" viewBox="0 0 600 160" preserveAspectRatio="none"><polyline id="line-in" fill="none" stroke="#2a9d8f" stroke-width="2"/><polyline id="line-out" fill="none" stroke="#e76f51" stroke-width="2"/></svg></section>
<section><h2>Topics <label class="muted"><input type="checkbox" id="show-system"> system topics</label></h2><table id="topics"><thead><tr><th>Topic</th><th class="num">Read / write queues</th><th class="num">Perm</th><th class="num">Messages</th><th>Queues (min – max offset)</th></tr></thead><tbody></tbody></table></section>
<section><h2>Consumer groups</h2><table id="groups"><thead><tr><th>Group</th><th>Model</th><th class="num">Lag</th><th>Clients</th><th>Per queue</th></tr></thead><tbody></tbody></table></section>
<section><h2>Message lookup</h2>
<form id="lookup"><input name="id" placeholder="message id (offset msgId or UNIQ_KEY)"><input name="topic" placeholder="topic (for key / UNIQ_KEY)"><input name="key" placeholder="key"><button>Find</button></form>
<table id="messages"><thead><tr><th>Topic</th><th class="num">Queue</th><th class="num">Offset</th><th>Tags</th><th>Keys</th><th>UNIQ_KEY</th><th>Stored</th><th>Body</th></tr></thead><tbody></tbody></table><div id="lookup-status" class="muted"></div></section>
</main>
<script>
const $ = (s) => document.querySelector(s);
const esc = (v) => String(v).replace(/[&<>"]/g, (c) => ({'&':'&amp;','<':'&lt;','>':'&gt;','"':'&quot;'}[c]));
const api = (p) => fetch(p).then((r) => r.json());
function rows(sel, html) { $(sel + ' tbody').innerHTML = html.join(''); }
async function refresh() {
  const [info, cluster, topics, groups, rates] = await Promise.all([api('api/info'), api('api/cluster'), api('api/topics'), api('api/groups'), api('api/rates')]);
  $('#broker').textContent = info.brokerName + ' @ ' + info.brokerAddr + ' (' + info.cluster + ', ' + info.role + ')';
  rows('#cluster', cluster.brokers.map((b) => '<tr data-broker="' + esc(b.brokerName) + '"><td>' + esc(b.cluster) + '</td><td>' + esc(b.brokerName) + '</td><td class="num">' + b.brokerId + '</td><td>' + b.role + '</td><td>' + esc(b.addr) + '</td></tr>'));
  $('#cluster-error').textContent = cluster.error ? 'nameserver: ' + cluster.error : '';
  const sys = $('#show-system').checked;
  rows('#topics', topics.filter((t) => sys || !t.system).map((t) => '<tr data-topic="' + esc(t.topic) + '"><td>' + esc(t.topic) + '</td><td class="num">' + t.readQueueNums + ' / ' + t.writeQueueNums + '</td><td class="num">' + t.perm + '</td><td class="num" data-field="messages">' + t.messages + '</td><td class="muted">' + t.queues.map((q) => q.queueId + ': ' + q.minOffset + '–<span data-queue="' + q.queueId + '">' + q.maxOffset + '</span>').join(', ') + '</td></tr>'));
  rows('#groups', groups.map((g) => '<tr data-group="' + esc(g.group) + '"><td>' + esc(g.group) + '</td><td>' + esc(g.messageModel) + '</td><td class="num ' + (g.lag ? 'lag' : '') + '" data-field="lag">' + g.lag + '</td><td>' + (g.clients.map((c) => esc(c.clientId) + ' <span class="muted">' + esc(c.addr) + ' ' + esc(c.language) + '</span>').join('<br>') || '<span class="muted">none</span>') + '</td><td><details><summary>' + g.queues.length + ' queues</summary><table>' + g.queues.map((q) => '<tr data-queue="' + esc(q.topic) + '/' + q.queueId + '"><td>' + esc(q.topic) + '</td><td class="num">' + q.queueId + '</td><td class="num">' + q.brokerOffset + '</td><td class="num">' + q.consumerOffset + '</td><td class="num" data-field="lag">' + q.lag + '</td></tr>').join('') + '</table></details></td></tr>'));
  const pts = rates.points; const last = pts[pts.length - 1] || { inPerSec: 0, outPerSec: 0 };
  $('#rate-in').textContent = last.inPerSec.toFixed(0); $('#rate-out').textContent = last.outPerSec.toFixed(0);
  $('#put-total').textContent = rates.putTotal; $('#get-total').textContent = rates.getTotal;
  const max = Math.max(1, ...pts.map((p) => Math.max(p.inPerSec, p.outPerSec)));
  const line = (f) => pts.map((p, i) => (i * 600 / Math.max(1, pts.length - 1)).toFixed(1) + ',' + (155 - f(p) * 150 / max).toFixed(1)).join(' ');
  $('#line-in').setAttribute('points', line((p) => p.inPerSec)); $('#line-out').setAttribute('points', line((p) => p.outPerSec));
  $('#updated').textContent = 'updated ' + new Date().toLocaleTimeString();
  document.body.dataset.loaded = 'true';
}
$('#lookup').addEventListener('submit', async (e) => {
  e.preventDefault();
  const q = new URLSearchParams([...new FormData(e.target)].filter(([, v]) => v));
  const found = await api('api/message?' + q);
  rows('#messages', found.map((m) => '<tr><td>' + esc(m.topic) + '</td><td class="num">' + m.queueId + '</td><td class="num">' + m.queueOffset + '</td><td>' + esc(m.tags) + '</td><td>' + esc(m.keys) + '</td><td>' + esc(m.uniqKey) + '</td><td>' + new Date(m.storeTimestamp).toISOString() + '</td><td><pre>' + esc(m.body) + '</pre></td></tr>'));
  $('#lookup-status').textContent = found.length + ' message(s) found';
});
$('#show-system').addEventListener('change', refresh);
refresh(); setInterval(refresh, 2000);
</script></body></html>
`;
