// A DLedger group as real processes for compat/dledger-faults.mjs and compat/dledger-compat.mjs: one nameserver of
// ours and three members, each of a kind: ours (`node dist/main.js broker`) or an official Apache RocketMQ broker
// (5.3.3 or 4.9.8, through compat/official/official.sh, registering with our nameserver). Temp stores, 127.0.0.1.
// Every directed peer link i→j runs through its own pausable TCP proxy (member i is told j's address is the proxy),
// so a member can be cut off both ways while its remoting port stays reachable for clients. kill -9 / restart on the
// same store, SIGSTOP / SIGCONT, partitions, and a leadership transfer asked of the leader over the peer port.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OfficialServer, OursServer, pickPorts, usedPorts } from './servers.mjs';
import { Code, Remote, pausableProxy, waitFor } from './ha-tools.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dist = (p) => import(path.join(ROOT, 'dist', p));
const { PeerRpcClient } = await dist('ha/dledger/peer-rpc.js');
const { DLedgerRequestCode } = await dist('ha/dledger/codes.js');
const { decodeBase, encodeLeadershipTransferRequest } = await dist('ha/dledger/protocol.js');
const { silentLogger } = await dist('common/logger.js');

export const GROUP = 'RaftNode00';
export const IDS = ['n0', 'n1', 'n2'];
/** Whether `kind` names a member kind: ours, or an official broker version official.sh starts (x.y.z, or x.y / x.y.x for the newest x.y). */
export const isMemberKind = (kind) => kind === 'ours' || /^\d+\.\d+(\.(\d+|x))?$/.test(kind);
/**
 * DLedger data file size (mappedFileSizeCommitLog, which the official broker also hands its DLedger store as the
 * data file size; every member of a group needs the same): small, so a run crosses file ends (the blank at a file's end).
 */
export const DATA_FILE_BYTES = 1048576;

/** A port nothing listens on right now (above 32768: never one pickPorts hands out). */
function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export class DLedgerGroup {
  /** `kinds`: one per member of IDS (default: three of ours). */
  constructor(tmp, logDir, { kinds = ['ours', 'ours', 'ours'], fileBytes = DATA_FILE_BYTES } = {}) {
    const bad = kinds.filter((k) => !isMemberKind(k));
    if (kinds.length !== IDS.length || bad.length) throw new Error(`DLedgerGroup: ${IDS.length} kinds, each ours or an official version x.y.z (got ${kinds.join(',')})`);
    this.tmp = tmp;
    this.logDir = logDir;
    this.kinds = new Map(IDS.map((id, i) => [id, kinds[i]]));
    this.fileBytes = fileBytes;
    this.remote = new Remote();
    this.rpc = new PeerRpcClient(silentLogger());
    this.members = new Map(); // id → OursServer | OfficialServer
    this.stalled = new Set(); // ids under SIGSTOP
    this.proxies = new Map(); // `${from}>${to}` → pausable proxy in front of `to`'s peer port
  }

  async start() {
    const taken = [];
    this.namesrv = new OursServer(this.tmp, this.logDir, { name: 'dledger-namesrv', namesrvOnly: true });
    this.namesrv.ports = await pickPorts(taken);
    taken.push(...usedPorts(this.namesrv.ports));
    await this.namesrv.start();
    this.nsAddr = `127.0.0.1:${this.namesrv.ports.ns}`;
    const peerPort = {};
    for (const id of IDS) peerPort[id] = await freePort();
    this.peerPort = peerPort;
    for (const from of IDS) {
      for (const to of IDS) if (from !== to) this.proxies.set(`${from}>${to}`, await pausableProxy('127.0.0.1', peerPort[to]));
    }
    for (const id of IDS) {
      // member `id` listens on its own peer port and reaches each other member through the proxy id→other
      const peers = IDS.map((o) => `${o}-127.0.0.1:${o === id ? peerPort[id] : this.proxies.get(`${id}>${o}`).port}`).join(';');
      const m = this.kindOf(id) === 'ours' ? this.#ours(id, peers) : this.#official(id, peers);
      m.ports = await pickPorts(taken);
      taken.push(...usedPorts(m.ports));
      this.members.set(id, m);
    }
    for (const m of this.members.values()) if (m.prepare) await m.prepare();
    await Promise.all([...this.members.values()].map((m) => m.start()));
  }

  #ours(id, peers) {
    return new OursServer(this.tmp, this.logDir, {
      name: `dledger-${id}`, namesrvAddr: this.nsAddr, extraArgs: [
        '--brokerIP1=127.0.0.1', `--brokerName=${GROUP}`, `--mappedFileSizeCommitLog=${this.fileBytes}`,
        '--mappedFileSizeConsumeQueue=60000', '--registerNameServerPeriod=10000', '--slaveReadEnable=true',
        '--enableDLegerCommitLog=true', `--dLegerGroup=${GROUP}`, `--dLegerPeers=${peers}`, `--dLegerSelfId=${id}`,
      ],
    });
  }

  /**
   * An official broker (official.sh's broker.properties plus these lines; later keys win) on our nameserver.
   * recheckReputOffsetFromCq=true (a 5.x key, 4.9.8 ignores it): by default a 5.3.3 broker restarted after kill -9
   * dispatches from its DLedger committed position (DefaultMessageStore.start: reputFromOffset = confirm offset), and
   * committed entries it had not yet dispatched when it died never reach its consume queues (storeerror.log: "[BUG]logic
   * queue order maybe wrong", later queue offsets shifted down); with the key it dispatches from its consume queues' end.
   */
  #official(id, peers) {
    const extra = [
      `brokerName=${GROUP}`, `mappedFileSizeCommitLog=${this.fileBytes}`, 'mappedFileSizeConsumeQueue=60000',
      'registerNameServerPeriod=10000', 'slaveReadEnable=true', 'recheckReputOffsetFromCq=true',
      'enableDLegerCommitLog=true', `dLegerGroup=${GROUP}`, `dLegerPeers=${peers}`, `dLegerSelfId=${id}`,
    ].join('\n');
    return new OfficialServer(this.kindOf(id), this.tmp, this.logDir, { name: `dledger-${id}-${this.kindOf(id)}`, namesrvAddr: this.nsAddr, extra });
  }

  kindOf(id) {
    return this.kinds.get(id);
  }

  addr(id) {
    return `127.0.0.1:${this.members.get(id).ports.broker}`;
  }

  idOf(addr) {
    return IDS.find((id) => this.addr(id) === addr) ?? null;
  }

  /** The group's DLedger data directory of member `id` (what the store writes: storePathRootDir/dledger-ID/data). */
  dataDir(id) {
    const m = this.members.get(id);
    // official.sh: storePathRootDir=STORE/store
    return path.join(m.store, ...(this.kindOf(id) === 'ours' ? [] : ['store']), `dledger-${id}`, 'data');
  }

  /** brokerId → address of the group in the nameserver. */
  async route() {
    const info = await this.remote.json(this.nsAddr, Code.GET_BROKER_CLUSTER_INFO);
    return info.brokerAddrTable?.[GROUP]?.brokerAddrs ?? {};
  }

  /** The master's address in the nameserver, or null. */
  async masterAddr() {
    return (await this.route())['0'] ?? null;
  }

  /**
   * `topic` on every member, so whichever is elected serves it: created on each member that takes it — an official
   * 4.9.8 slave refuses (SYSTEM_ERROR "Can't modify topic ... from slave broker") and gets it from the master's
   * metadata sync (every 10 s) — then waited for until every member lists it.
   */
  async createTopic(topic, queues, timeoutMs) {
    for (const id of IDS) {
      const res = await this.remote.createTopic(this.addr(id), topic, queues);
      if (res.code !== 0 && !(this.kindOf(id) !== 'ours' && /from slave broker/.test(res.remark ?? ''))) {
        throw new Error(`creating ${topic} on ${id}: ${res.code} ${res.remark ?? ''}`);
      }
    }
    await waitFor(async () => {
      for (const id of IDS) if (!(await this.remote.json(this.addr(id), Code.GET_ALL_TOPIC_CONFIG)).topicConfigTable?.[topic]) return false;
      return true;
    }, timeoutMs, `${topic} on every member`, 1000);
  }

  /**
   * Waits until the group is quiet: a master in the route and every member at the same committed position, the same
   * in two looks a second apart. Resolves { master, committedPos }; rejects with `what` after timeoutMs.
   */
  async waitSettled(timeoutMs, what = 'every member at the same committed position') {
    let master = null;
    let committedPos = -1;
    let last = '';
    await waitFor(async () => {
      master = await this.masterAddr();
      if (!master) return false;
      const pos = await Promise.all(IDS.map((id) => this.committedPos(id)));
      const key = pos.join(',');
      const same = pos.every((p) => p === pos[0]) && key === last;
      last = key;
      committedPos = pos[0];
      return same && (await this.masterAddr()) === master;
    }, timeoutMs, what, 1000);
    return { master, committedPos };
  }

  /** The committed position each member reports (commitLogMaxOffset = DLedgerCommitLog.getMaxOffset). */
  async committedPos(id) {
    return this.remote.maxPhyOffset(this.addr(id));
  }

  /**
   * kill -9. The proxies in front of its peer port stop listening too, so that port refuses connections as a dead
   * process's would (ours campaigns at once when the leader's link drops and its port refuses).
   */
  async kill(id) {
    // refusing first: the others probe the port the moment the links drop
    for (const [key, p] of this.proxies) if (key.endsWith(`>${id}`)) p.refuse();
    await this.members.get(id).kill();
    for (const [key, p] of this.proxies) if (key.endsWith(`>${id}`)) await p.close();
  }

  /** Starts a killed member again on its store, ports and peers (the proxies in front of it listen again first). */
  async restart(id) {
    for (const [key, p] of this.proxies) {
      if (key.endsWith(`>${id}`)) this.proxies.set(key, await pausableProxy('127.0.0.1', this.peerPort[id], p.port));
    }
    const m = this.members.get(id);
    if (this.kindOf(id) === 'ours') await m.start();
    else await m.restartBroker();
  }

  /** The term in member `id`'s currterm file (DLedger persists it before voting; ours and the official alike). */
  term(id) {
    const text = fs.readFileSync(path.join(path.dirname(this.dataDir(id)), 'currterm'), 'utf8');
    const m = /currTerm=(\d+)/.exec(text);
    if (!m) throw new Error(`no currTerm in ${id}'s currterm file`);
    return Number(m[1]);
  }

  /**
   * Asks the leader `leaderId` to hand leadership to `transfereeId` (LEADERSHIP_TRANSFER on its peer port, in the
   * term of its currterm file: METADATA answers carry no term) and resolves the answer's code (200 = done).
   */
  async transfer(leaderId, transfereeId) {
    const res = await this.rpc.call(`127.0.0.1:${this.peerPort[leaderId]}`, DLedgerRequestCode.LEADERSHIP_TRANSFER, encodeLeadershipTransferRequest({
      code: 200, group: GROUP, leaderId, localId: leaderId, remoteId: leaderId, term: this.term(leaderId), transferId: leaderId, transfereeId,
      takeLeadershipLedgerIndex: 0,
    }), 15_000);
    return res ? decodeBase(res).code : null;
  }

  stall(id) {
    process.kill(this.members.get(id).pid, 'SIGSTOP');
    this.stalled.add(id);
  }

  resume(id) {
    if (!this.stalled.delete(id)) return;
    try {
      process.kill(this.members.get(id).pid, 'SIGCONT');
    } catch {
      // gone
    }
  }

  /** Cuts member `id` off from the other two both ways (links stay open, nothing passes: a silent partition). */
  partition(id) {
    for (const [key, p] of this.proxies) if (key.split('>').includes(id)) p.pause();
  }

  heal(id) {
    for (const [key, p] of this.proxies) if (key.split('>').includes(id)) p.resume();
  }

  /** SIGCONT for stalled members (they could not act on SIGTERM otherwise); safe from a signal handler. */
  resumeAll() {
    for (const id of [...this.stalled]) this.resume(id);
  }

  /**
   * An official member's own logs (in its store, which goes away) copied beside official.sh's output: 5.3.3 writes
   * STORE/home/logs/rocketmqlogs/*.log, 4.9.8 everything to official.sh's logback file STORE/logs/broker.log.
   */
  #keepOfficialLogs() {
    for (const [id, m] of this.members) {
      if (this.kindOf(id) === 'ours') continue;
      const found = [path.join('home', 'logs', 'rocketmqlogs', 'broker.log'), path.join('home', 'logs', 'rocketmqlogs', 'storeerror.log'),
        path.join('logs', 'broker.log')].filter((f) => fs.existsSync(path.join(m.store, f)));
      for (const f of found) fs.copyFileSync(path.join(m.store, f), path.join(this.logDir, `official-${id}-${f.split(path.sep).join('-')}`));
    }
  }

  async stop() {
    this.resumeAll();
    for (const id of IDS) this.heal(id);
    for (const m of this.members.values()) await m.stop().catch(() => undefined);
    this.#keepOfficialLogs();
    await this.namesrv?.stop().catch(() => undefined);
    for (const p of this.proxies.values()) await p.close().catch(() => undefined);
    await this.remote.close();
    await this.rpc.close();
  }
}
