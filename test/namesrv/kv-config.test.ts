import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RequestCode } from '../../src/common/request-code.js';
import { ResponseCode } from '../../src/common/response-code.js';
import { KvConfigLoadError } from '../../src/namesrv/index.js';
import { json, startNamesrv, tempDir } from './helpers.js';

describe('KV config', () => {
  it('put / get / delete / list, persisted across a restart', async () => {
    const kvConfigPath = path.join(tempDir(), 'nested', 'kvConfig.json');
    let t = await startNamesrv({ kvConfigPath });
    try {
      const missing = await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' });
      expect(missing.code).toBe(ResponseCode.QUERY_NOT_FOUND);
      expect(missing.remark).toBe('No config item, Namespace: NS Key: k');
      const noNs = await t.call(RequestCode.GET_KVLIST_BY_NAMESPACE, { namespace: 'NS' });
      expect(noNs.code).toBe(ResponseCode.QUERY_NOT_FOUND);
      expect(noNs.remark).toBe('No config item, Namespace: NS');

      expect((await t.call(RequestCode.PUT_KV_CONFIG, { namespace: 'NS', key: 'k', value: 'v1' })).code).toBe(ResponseCode.SUCCESS);
      expect((await t.call(RequestCode.PUT_KV_CONFIG, { namespace: 'NS', key: 'k2', value: 'v2' })).code).toBe(ResponseCode.SUCCESS);
      expect((await t.call(RequestCode.PUT_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T', value: 'a:4;b:4' })).code).toBe(0);
      const got = await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' });
      expect(got.code).toBe(ResponseCode.SUCCESS);
      expect(got.extFields.value).toBe('v1');
      expect(json(await t.call(RequestCode.GET_KVLIST_BY_NAMESPACE, { namespace: 'NS' }))).toEqual({ table: { k: 'v1', k2: 'v2' } });

      expect((await t.call(RequestCode.DELETE_KV_CONFIG, { namespace: 'NS', key: 'k2' })).code).toBe(ResponseCode.SUCCESS);
      expect((await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k2' })).code).toBe(ResponseCode.QUERY_NOT_FOUND);

      // the file is what Java's KVConfigSerializeWrapper writes, the version before the last change is kept as
      // .bak (Java MixAll.string2File), and no temp file is left behind
      expect(JSON.parse(fs.readFileSync(kvConfigPath, 'utf8'))).toEqual({
        configTable: { NS: { k: 'v1' }, ORDER_TOPIC_CONFIG: { T: 'a:4;b:4' } },
      });
      expect(JSON.parse(fs.readFileSync(`${kvConfigPath}.bak`, 'utf8'))).toEqual({
        configTable: { NS: { k: 'v1', k2: 'v2' }, ORDER_TOPIC_CONFIG: { T: 'a:4;b:4' } },
      });
      expect(fs.readdirSync(path.dirname(kvConfigPath)).sort()).toEqual(['kvConfig.json', 'kvConfig.json.bak']);

      // missing required header fields are errors, not crashes
      expect((await t.call(RequestCode.PUT_KV_CONFIG, { namespace: 'NS', key: 'k' })).code).toBe(ResponseCode.SYSTEM_ERROR);
    } finally {
      await t.stop();
    }

    t = await startNamesrv({ kvConfigPath });
    try {
      expect((await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' })).extFields.value).toBe('v1');
      expect((await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T' })).extFields.value).toBe('a:4;b:4');
      expect((await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k2' })).code).toBe(ResponseCode.QUERY_NOT_FOUND);
    } finally {
      await t.stop();
    }
  });

  it('loads a file written by the Java namesrv (fastjson, lenient)', async () => {
    const kvConfigPath = path.join(tempDir(), 'kvConfig.json');
    fs.writeFileSync(kvConfigPath, '{"configTable":{"ORDER_TOPIC_CONFIG":{"T":"broker-a:8"},NS:{k:\'v\'}}}');
    const t = await startNamesrv({ kvConfigPath });
    try {
      expect((await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T' })).extFields.value).toBe('broker-a:8');
      expect((await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' })).extFields.value).toBe('v');
    } finally {
      await t.stop();
    }
  });

  it('refuses to start on a corrupt file rather than overwrite it', async () => {
    const kvConfigPath = path.join(tempDir(), 'kvConfig.json');
    fs.writeFileSync(kvConfigPath, '{"configTable":{');
    await expect(startNamesrv({ kvConfigPath })).rejects.toBeInstanceOf(KvConfigLoadError);
  });

  it('falls back to the .bak copy when the file is corrupt', async () => {
    const kvConfigPath = path.join(tempDir(), 'kvConfig.json');
    fs.writeFileSync(kvConfigPath, '{"configTable":{');
    fs.writeFileSync(`${kvConfigPath}.bak`, '{"configTable":{"NS":{"k":"from-bak"}}}');
    const t = await startNamesrv({ kvConfigPath });
    try {
      expect((await t.call(RequestCode.GET_KV_CONFIG, { namespace: 'NS', key: 'k' })).extFields.value).toBe('from-bak');
    } finally {
      await t.stop();
    }
  });
});
