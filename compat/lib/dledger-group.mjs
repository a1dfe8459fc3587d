// A DLedger group of our brokers as real processes for compat/dledger-faults.mjs: one nameserver of ours and three
// `node dist/main.js broker` members (temp stores, 127.0.0.1). Every directed peer link i→j runs through its own
// pausable TCP proxy (member i is told j's address is the proxy), so a member can be cut off both ways while its
// remoting port stays reachable for clients. kill -9 / restart on the same store, SIGSTOP / SIGCONT, partitions.
import net from 'node:net';
import path from 'node:path';
import { OursServer, pickPorts, usedPorts } from './servers.mjs';
import { Code, Remote, pausableProxy } from './ha-tools.mjs';

export const GROUP = 'RaftNode00';
export const IDS = ['n0', 'n1', 'n2'];
/** DLedger data file size (mappedFileSizeCommitLog): small, so a run crosses file ends (the blank at a file's end). */
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
  constructor(tmp, logDir) {
    this.tmp = tmp;
    this.logDir = logDir;
    this.remote = new Remote();
    this.members = new Map(); // id → OursServer
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
      const m = new OursServer(this.tmp, this.logDir, {
        name: `dledger-${id}`, namesrvAddr: this.nsAddr, extraArgs: [
          '--brokerIP1=127.0.0.1', `--brokerName=${GROUP}`, `--mappedFileSizeCommitLog=${DATA_FILE_BYTES}`,
          '--mappedFileSizeConsumeQueue=60000', '--registerNameServerPeriod=10000', '--slaveReadEnable=true',
          '--enableDLegerCommitLog=true', `--dLegerGroup=${GROUP}`, `--dLegerPeers=${peers}`, `--dLegerSelfId=${id}`,
        ],
      });
      m.ports = await pickPorts(taken);
      taken.push(...usedPorts(m.ports));
      this.members.set(id, m);
    }
    await Promise.all([...this.members.values()].map((m) => m.start()));
  }

  addr(id) {
    return `127.0.0.1:${this.members.get(id).ports.broker}`;
  }

  idOf(addr) {
    return IDS.find((id) => this.addr(id) === addr) ?? null;
  }

  /** The group's DLedger data directory of member `id` (what the store writes: storePathRootDir/dledger-ID/data). */
  dataDir(id) {
    return path.join(this.members.get(id).store, `dledger-${id}`, 'data');
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
    await this.members.get(id).start();
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

  async stop() {
    this.resumeAll();
    for (const id of IDS) this.heal(id);
    for (const m of this.members.values()) await m.stop().catch(() => undefined);
    await this.namesrv?.stop().catch(() => undefined);
    for (const p of this.proxies.values()) await p.close().catch(() => undefined);
    await this.remote.close();
  }
}
