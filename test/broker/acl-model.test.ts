import { describe, expect, it } from 'vitest';
import { parsePlainAclYaml } from '../../src/broker/acl/plain-acl-config.js';
import { compileAddressPattern } from '../../src/broker/acl/remote-address.js';
import { type Acl, decidingEntry, ipInRange, parseResource, resourceKey } from '../../src/broker/auth/auth-model.js';

describe('ACL 1.0 white address patterns (RemoteAddressStrategyFactory)', () => {
  it.each([
    ['', '10.0.0.1', false],
    ['*', '10.0.0.1', true],
    ['10.0.0.1', '10.0.0.1', true],
    ['10.0.0.1', '10.0.0.2', false],
    ['192.168.1.*', '192.168.1.77', true],
    ['192.168.1.*', '192.168.2.77', false],
    ['192.168.1.10-20', '192.168.1.15', true],
    ['192.168.1.10-20', '192.168.1.21', false],
    ['192.168.1.{1,5}', '192.168.1.5', true],
    ['192.168.1.{1,5}', '192.168.1.2', false],
    ['10.0.0.1,10.0.0.3', '10.0.0.3', true],
    ['::1', '::1', true],
  ])('%s matches %s: %s', (pattern, ip, expected) => {
    expect(compileAddressPattern(pattern)(ip)).toBe(expected);
  });

  it('refuses a pattern the official broker refuses', () => {
    expect(() => compileAddressPattern('192.168.1.300-400')).toThrow(/Netaddress examine scope/);
  });
});

describe('plain_acl.yml', () => {
  it('names the line of a syntax error', () => {
    const text = 'accounts:\n  - accessKey: RocketMQ\n    secretKey: [oops\n';
    expect(() => parsePlainAclYaml(text)).toThrow(/line \d+/);
  });
  it('reads accounts, white addresses and the data version', () => {
    const f = parsePlainAclYaml('globalWhiteRemoteAddresses: ["10.*"]\naccounts:\n  - {accessKey: abcdefg, secretKey: hijklmn, admin: true, topicPerms: [a=PUB]}\ndataVersion:\n  - {counter: 3, timestamp: 42}\n');
    expect(f.globalWhiteRemoteAddresses).toEqual(['10.*']);
    expect(f.accounts[0]).toMatchObject({ accessKey: 'abcdefg', admin: true, topicPerms: ['a=PUB'] });
    expect(f.dataVersion).toEqual({ counter: 3, timestamp: 42 });
  });
});

describe('ACL 2.0 policy matching (AclAuthorizationHandler)', () => {
  const entry = (resource: string, actions: string[], decision: 'Allow' | 'Deny', sourceIps: string[] = []) => ({
    resource: parseResource(resource)!,
    actions: actions as never,
    sourceIps,
    decision,
  });
  const acl = (custom: ReturnType<typeof entry>[], dflt: ReturnType<typeof entry>[] = []): Acl => ({
    subject: 'User:u',
    policies: [
      { policyType: 'Custom', entries: custom },
      { policyType: 'Default', entries: dflt },
    ],
  });
  const topic = (name: string) => ({ type: 'Topic' as const, name, pattern: 'LITERAL' as const });

  it('parses and prints resource keys', () => {
    for (const k of ['*', 'Topic:*', 'Topic:abc', 'Group:pre*', 'Cluster:DefaultCluster']) expect(resourceKey(parseResource(k)!)).toBe(k);
    expect(parseResource('Bogus:x')).toBeUndefined();
  });

  it('prefers a literal entry to a prefixed or any one, Custom to Default', () => {
    const a = acl([entry('Topic:*', ['Pub'], 'Deny'), entry('Topic:orders', ['Pub'], 'Allow')], [entry('*', ['All'], 'Deny')]);
    expect(decidingEntry(a, topic('orders'), ['Pub'], '127.0.0.1')?.decision).toBe('Allow');
    expect(decidingEntry(a, topic('other'), ['Pub'], '127.0.0.1')?.decision).toBe('Deny');
    expect(decidingEntry(a, topic('orders'), ['Sub'], '127.0.0.1')?.resource.type).toBe('Any'); // Custom had no Sub: Default decides
  });

  it('matches source IPs and CIDR blocks', () => {
    expect(ipInRange('10.1.2.3', '10.1.0.0/16')).toBe(true);
    expect(ipInRange('10.2.2.3', '10.1.0.0/16')).toBe(false);
    const a = acl([entry('Topic:t', ['Pub'], 'Allow', ['192.168.0.0/24'])]);
    expect(decidingEntry(a, topic('t'), ['Pub'], '192.168.0.9')).toBeDefined();
    expect(decidingEntry(a, topic('t'), ['Pub'], '127.0.0.1')).toBeUndefined();
  });
});
