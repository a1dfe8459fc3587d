import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareRoleConfig } from '../../src/broker/broker-role.js';
import { BROKER_SCHEMA, ConfigError, applySettings, defaults } from '../../src/common/config.js';
import { checkDLedgerKeys, followerBrokerIdOf, parseDLedgerPeers } from '../../src/common/config-dledger.js';

const MAIN = path.resolve(import.meta.dirname, '../../dist/main.js');
const PEERS = 'n0-127.0.0.1:40911;n1-127.0.0.1:40912;n2-127.0.0.1:40913';

function dledgerConfig(extra: Record<string, string>) {
  const c = defaults(BROKER_SCHEMA);
  applySettings(BROKER_SCHEMA, c, { enableDLegerCommitLog: 'true', dLegerGroup: 'RaftNode00', dLegerPeers: PEERS, dLegerSelfId: 'n1', ...extra });
  return c;
}

describe('DLedger config keys', () => {
  it('parses dLegerPeers as DLedgerConfig does: the id is the text before the first dash', () => {
    expect(parseDLedgerPeers(PEERS)).toEqual([
      { id: 'n0', addr: '127.0.0.1:40911' }, { id: 'n1', addr: '127.0.0.1:40912' }, { id: 'n2', addr: '127.0.0.1:40913' },
    ]);
    expect(parseDLedgerPeers('a1-my-host:1;')).toEqual([{ id: 'a1', addr: 'my-host:1' }]);
    for (const bad of ['', ';', 'n0', '-127.0.0.1:1', 'n0-127.0.0.1', 'n0-127.0.0.1:0', 'n0-127.0.0.1:70000', 'n0-h:1;n0-h:2']) {
      expect(() => parseDLedgerPeers(bad), bad).toThrow();
    }
  });

  it('refuses a malformed dLegerPeers or dLegerSelfId when the value is set, naming the key', () => {
    const c = defaults(BROKER_SCHEMA);
    expect(() => applySettings(BROKER_SCHEMA, c, { dLegerPeers: 'n0:127.0.0.1:1' })).toThrow(/dLegerPeers/);
    for (const id of ['0', 'nn0', 'n', 'n-1', 'n0a']) {
      expect(() => applySettings(BROKER_SCHEMA, c, { dLegerSelfId: id }), id).toThrow(ConfigError);
    }
    applySettings(BROKER_SCHEMA, c, { dLegerSelfId: 'x12', dLegerPeers: PEERS });
    expect(c.dLegerSelfId).toBe('x12');
  });

  it('requires group, peers and a selfId among the peers in DLedger mode, and nothing otherwise', () => {
    expect(() => checkDLedgerKeys(dledgerConfig({}))).not.toThrow();
    expect(() => checkDLedgerKeys(dledgerConfig({ dLegerSelfId: 'n3' }))).toThrow(/dLegerSelfId: n3 is not one of dLegerPeers \(n0, n1, n2\)/);
    expect(() => checkDLedgerKeys(dledgerConfig({ dLegerGroup: '' }))).toThrow(/dLegerGroup/);
    expect(() => checkDLedgerKeys(dledgerConfig({ dLegerPeers: '' }))).toThrow(/dLegerPeers/);
    expect(() => checkDLedgerKeys(dledgerConfig({ dLegerSelfId: '' }))).toThrow(/dLegerSelfId/);
    expect(() => checkDLedgerKeys(defaults(BROKER_SCHEMA))).not.toThrow();
  });

  it('starts a DLedger member as brokerId -1 whatever its role (BrokerStartup), after the role checks', () => {
    const master = dledgerConfig({ brokerId: '0' });
    prepareRoleConfig(master);
    expect(master.brokerId).toBe(-1);
    const slave = dledgerConfig({ brokerRole: 'SLAVE', brokerId: '3' });
    prepareRoleConfig(slave);
    expect(slave.brokerId).toBe(-1);
    // the slave check comes first, as in BrokerStartup
    expect(() => prepareRoleConfig(dledgerConfig({ brokerRole: 'SLAVE', brokerId: '0' }))).toThrow(/brokerId/);
    const classic = defaults(BROKER_SCHEMA);
    prepareRoleConfig(classic);
    expect(classic.brokerId).toBe(0);
  });

  it('derives a follower brokerId from the member id: digits + 1', () => {
    expect(followerBrokerIdOf('n0')).toBe(1);
    expect(followerBrokerIdOf('n2')).toBe(3);
    expect(followerBrokerIdOf('a17')).toBe(18);
  });

  it('rmq broker exits 2 with one line naming the key when dLegerSelfId is not a member', () => {
    const r = spawnSync('node', [MAIN, 'broker', '-n', '127.0.0.1:1', '--enableDLegerCommitLog=true', '--dLegerGroup=g',
      `--dLegerPeers=${PEERS}`, '--dLegerSelfId=n7'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('dLegerSelfId: n7 is not one of dLegerPeers');
  });
});
