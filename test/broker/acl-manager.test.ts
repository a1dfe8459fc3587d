import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePlainAclYaml } from '../../src/broker/acl/plain-acl-config.js';
import { PlainAclManager } from '../../src/broker/acl/plain-acl-manager.js';
import { logger, tempDir } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');

describe('plain_acl.yml: admin changes and the file watcher', () => {
  it('a watcher check while an admin change is being written neither reverts it nor loses the next one', async () => {
    const file = path.join(tempDir('acl'), 'plain_acl.yml');
    fs.copyFileSync(path.join(ROOT, 'compat/acl/plain_acl.yml'), file);
    const m = new PlainAclManager(file, logger);
    m.load();
    const before = parsePlainAclYaml(fs.readFileSync(file, 'utf8')).dataVersion.counter;

    // the watcher's interval fires while the first change is still on its way to the disk (the file is the old one)
    const first = m.updateAccessConfig({ accessKey: 'NewAccount1', secretKey: 'newSecret123', admin: false, topicPerms: ['AclTopicA=PUB'] });
    m.check();
    await first;
    expect(m.state.accounts.has('NewAccount1')).toBe(true);

    const second = m.updateGlobalWhiteAddrs(['10.10.104.*']);
    m.check();
    await second;
    m.check(); // the file now holds both changes: nothing to reload

    const onDisk = parsePlainAclYaml(fs.readFileSync(file, 'utf8'));
    expect(onDisk.accounts.map((a) => a.accessKey)).toContain('NewAccount1');
    expect(onDisk.globalWhiteRemoteAddresses).toEqual(['10.10.104.*']);
    expect(onDisk.dataVersion.counter).toBe(before + 2);
    expect(m.state.accounts.has('NewAccount1')).toBe(true);
    await m.close();
  });
});
