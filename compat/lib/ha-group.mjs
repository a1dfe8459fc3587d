// A broker group of real processes for the HA fault scripts and benchmarks: a nameserver, a master, optionally a
// slave, all ours (`node dist/main.js namesrv|broker`) or all official (compat/official/official.sh, version V).
// Settings use the Java keys; both kinds get the same ones. kill -9, restart on the same store, wiping a store.
import fs from 'node:fs';
import path from 'node:path';
import { OfficialServer, OursServer, pickPorts, usedPorts } from './servers.mjs';

/** Ports already handed out in this process (servers that are not listening yet). */
const taken = [];

async function freshPorts() {
  const p = await pickPorts(taken);
  taken.push(...usedPorts(p));
  return p;
}

const FILE_BYTES = 67108864;

export class Group {
  /**
   * @param kind 'ours' | '4.9.8' | '5.3.3'
   * @param opts.master / opts.slave  settings (Java keys) for each broker; slave null = no slave
   * @param opts.namesrv  an existing nameserver address to join (another group's); else the group brings one
   */
  constructor(kind, tmp, logDir, { name, brokerName = 'broker-a', master = {}, slave = null, namesrv = null, officialEnv = {} }) {
    this.officialEnv = officialEnv;
    this.kind = kind;
    this.name = name;
    this.tmp = tmp;
    this.logDir = logDir;
    this.brokerName = brokerName;
    this.masterSettings = { brokerName, brokerRole: 'ASYNC_MASTER', mappedFileSizeCommitLog: FILE_BYTES, ...master };
    this.slaveSettings = slave && { brokerName, brokerRole: 'SLAVE', brokerId: 1, slaveReadEnable: true, mappedFileSizeCommitLog: FILE_BYTES, ...slave };
    this.joinNamesrv = namesrv;
  }

  get label() {
    return this.kind === 'ours' ? 'ours' : `official-${this.kind}`;
  }

  #ours(role, settings, namesrvAddr) {
    const extraArgs = Object.entries(settings).map(([k, v]) => `--${k}=${v}`);
    return new OursServer(this.tmp, this.logDir, { name: `${this.name}-${role}`, namesrvAddr, extraArgs });
  }

  #official(role, settings, namesrvAddr) {
    const extra = Object.entries(settings).map(([k, v]) => `${k}=${v}`).join('\n');
    return new OfficialServer(this.kind, this.tmp, this.logDir, { name: `${this.name}-${role}`, namesrvAddr, extra, env: this.officialEnv });
  }

  async start() {
    if (this.kind === 'ours') {
      if (!this.joinNamesrv) {
        this.namesrvProc = new OursServer(this.tmp, this.logDir, { name: `${this.name}-namesrv`, namesrvOnly: true });
        this.namesrvProc.ports = await freshPorts();
        await this.namesrvProc.start();
      }
      this.nsAddr = this.joinNamesrv ?? `127.0.0.1:${this.namesrvProc.ports.ns}`;
      this.master = this.#ours('master', this.masterSettings, this.nsAddr);
    } else {
      this.master = this.#official('master', this.masterSettings, this.joinNamesrv);
    }
    this.master.ports = await freshPorts();
    if (this.master.prepare) await this.master.prepare();
    await this.master.start();
    this.nsAddr ??= this.joinNamesrv ?? `127.0.0.1:${this.master.ports.ns}`;
    if (this.slaveSettings) {
      this.slave = this.kind === 'ours' ? this.#ours('slave', this.slaveSettings, this.nsAddr) : this.#official('slave', this.slaveSettings, this.nsAddr);
      this.slave.ports = await freshPorts();
      await this.slave.start();
    }
  }

  get masterAddr() {
    return `127.0.0.1:${this.master.ports.broker}`;
  }

  get slaveAddr() {
    return this.slave ? `127.0.0.1:${this.slave.ports.broker}` : null;
  }

  /** The HA port of the master (listenPort + 1 for both kinds). */
  get masterHaAddr() {
    return `127.0.0.1:${this.master.ports.broker + 1}`;
  }

  storeRoot(server) {
    return server.label === 'ours' ? server.store : path.join(server.store, 'store');
  }

  commitLogDir(server) {
    return path.join(this.storeRoot(server), 'commitlog');
  }

  async killMaster() {
    await this.master.kill();
  }

  async killSlave() {
    await this.slave?.kill();
  }

  /** After killMaster: the master's whole store is gone (a lost disk). */
  wipeMasterStore() {
    fs.rmSync(this.storeRoot(this.master), { recursive: true, force: true });
    fs.mkdirSync(this.storeRoot(this.master), { recursive: true });
  }

  /** The slave's process id (ours: the node process; official: the broker JVM). */
  slavePid() {
    if (this.slave.label === 'ours') return this.slave.pid;
    return Number(fs.readFileSync(path.join(this.slave.store, 'broker.pid'), 'utf8').trim());
  }

  /**
   * SIGSTOP / SIGCONT of the slave: a stalled slave whose TCP links stay open (nothing is read or acked), as behind
   * a congested network. (Re-pointing an official 5.3.3 slave at a proxy is not possible: it ignores
   * haMasterAddress, whose value reaches its HA client before the client exists — BrokerController.initialize runs
   * before DefaultMessageStore.start creates it.)
   */
  pauseSlave() {
    process.kill(this.slavePid(), 'SIGSTOP');
  }

  resumeSlave() {
    process.kill(this.slavePid(), 'SIGCONT');
  }

  /** Starts the (killed or stopped) slave again on its store and ports with changed settings. */
  async restartSlaveWith(changes) {
    const ports = this.slave.ports;
    Object.assign(this.slaveSettings, changes);
    this.slave = this.kind === 'ours' ? this.#ours('slave', this.slaveSettings, this.nsAddr) : this.#official('slave', this.slaveSettings, this.nsAddr);
    this.slave.ports = ports;
    await this.slave.start();
  }

  /** Starts a killed broker again on its store and ports. */
  async restart(server) {
    if (server.restartBroker) await server.restartBroker();
    else await server.start();
  }

  async stop() {
    for (const s of [this.slave, this.master, this.namesrvProc]) await s?.stop().catch(() => undefined);
  }
}
