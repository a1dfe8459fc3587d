// The cold-data flow control's tables (Java ColdDataCgCtrService): what counts as cold, when a group is slowed,
// the 5 s reset, the minute after which a quiet group leaves, the strategies' thresholds, the info body.
import { describe, expect, it } from 'vitest';
import {
  COLD_CLEAR_INTERVAL_MS, COLD_HOLD_MAX, ColdDataFlowControl, MAX_CONFIGURED_GROUPS, type ColdCtrConfig, isSysConsumerGroup,
} from '../../src/broker/coldctr/cold-data-flow-control.js';

const MEMORY = 1000; // bytes of "RAM": with the default 26 %, data more than 260 bytes behind the end is cold

function setup(over: Partial<ColdCtrConfig> = {}) {
  const config: ColdCtrConfig = {
    coldDataFlowControlEnable: true, coldCtrStrategyEnable: false, usePIDColdCtrStrategy: true,
    cgColdReadThreshold: 100, globalColdReadThreshold: 1000, accessMessageInMemoryHotRatio: 26, ...over,
  };
  let nowMs = 1_000_000;
  const cold = new ColdDataFlowControl(config, MEMORY, () => nowMs);
  const advance = (ms: number) => {
    nowMs += ms;
    cold.tick();
  };
  return { config, cold, advance };
}

/** A stored record of `size` bytes at commit-log offset `at` (PHYSICALOFFSET at byte 28). */
function record(at: number, size = 50): Buffer {
  const b = Buffer.alloc(size);
  b.writeInt32BE(size, 0);
  b.writeBigInt64BE(BigInt(at), 28);
  return b;
}

describe('cold-data flow control', () => {
  it('counts the bytes of records further behind the end than the hot ratio of RAM', () => {
    const { cold, config } = setup();
    expect(cold.isColdArea(739, 1000)).toBe(true);
    expect(cold.isColdArea(740, 1000)).toBe(false);
    expect(cold.coldBytesOf('G', [record(0), record(500), record(739, 60), record(900)], 1000)).toBe(160);
    expect(cold.coldBytesOf('CID_RMQ_SYS_TRANS', [record(0)], 1000)).toBe(0);
    expect(cold.coldBytesOf('TOOLS_CONSUMER', [record(0)], 1000)).toBe(0);
    config.coldDataFlowControlEnable = false;
    expect(cold.coldBytesOf('G', [record(0)], 1000)).toBe(0);
    expect(isSysConsumerGroup('CID_RMQ_SYS_REVIVE_GROUP')).toBe(true);
    expect(isSysConsumerGroup('G')).toBe(false);
  });

  it('slows a group once its cold bytes reach its threshold, any group that read cold data past the global one, until the reset', () => {
    const { cold, config, advance } = setup();
    expect(cold.groupNeedsFlowControl('G')).toBe(false);
    cold.coldAcc('G', 99);
    expect(cold.groupNeedsFlowControl('G')).toBe(false);
    cold.coldAcc('G', 1);
    expect(cold.groupNeedsFlowControl('G')).toBe(true);
    // an operator's threshold wins over cgColdReadThreshold
    cold.setGroupThreshold('G', 500);
    expect(cold.groupNeedsFlowControl('G')).toBe(false);
    cold.removeGroupThreshold('G');
    expect(cold.groupNeedsFlowControl('G')).toBe(true);
    // the broker-wide counter: every group that read cold data is slowed, one that did not is not
    cold.coldAcc('H', 10);
    cold.coldAcc('I', 890);
    expect([cold.groupNeedsFlowControl('H'), cold.groupNeedsFlowControl('J')]).toEqual([true, false]);
    // disabled: nobody
    config.coldDataFlowControlEnable = false;
    expect(cold.groupNeedsFlowControl('G')).toBe(false);
    config.coldDataFlowControlEnable = true;
    advance(COLD_CLEAR_INTERVAL_MS - 1000); // not yet
    expect(cold.groupNeedsFlowControl('G')).toBe(true);
    advance(1000);
    expect([cold.groupNeedsFlowControl('G'), cold.groupNeedsFlowControl('H')]).toEqual([false, false]);
    const info = cold.info() as { runtimeTable: Record<string, { coldAcc: number }>; globalAcc: number };
    expect(info.globalAcc).toBe(0);
    expect(Object.keys(info.runtimeTable).sort()).toEqual(['G', 'H', 'I']);
    // a group quiet for a minute leaves the runtime table
    for (let t = 0; t < 12; t++) advance(COLD_CLEAR_INTERVAL_MS);
    expect(Object.keys((cold.info() as { runtimeTable: object }).runtimeTable)).toEqual([]);
  });

  it('answers the info body with the fields Java writes', () => {
    const { cold } = setup();
    cold.setGroupThreshold('G', 2048);
    cold.coldAcc('G', 300);
    expect(cold.info()).toEqual({
      runtimeTable: { G: { coldAcc: 300, lastColdReadTimeMills: 1_000_000, createTimeMills: 1_000_000 } },
      configTable: { G: 2048 },
      cgColdReadThreshold: 100,
      globalColdReadThreshold: 1000,
      globalAcc: 300,
    });
  });

  it('with the simple strategy raises the threshold of a group past it by half, and drops the raise when the strategy is off', () => {
    const { cold, config, advance } = setup({ coldCtrStrategyEnable: true, usePIDColdCtrStrategy: false });
    cold.coldAcc('G', 150);
    advance(COLD_CLEAR_INTERVAL_MS);
    expect((cold.info() as { configTable: object }).configTable).toEqual({ 'G||adaptive': 150 });
    cold.coldAcc('G', 149);
    expect(cold.groupNeedsFlowControl('G')).toBe(false); // the raised threshold applies
    cold.coldAcc('G', 1);
    expect(cold.groupNeedsFlowControl('G')).toBe(true);
    // an operator's threshold is never raised
    cold.setGroupThreshold('H', 100);
    cold.coldAcc('H', 500);
    config.coldCtrStrategyEnable = false;
    advance(COLD_CLEAR_INTERVAL_MS);
    expect((cold.info() as { configTable: object }).configTable).toEqual({ H: 100 });
  });

  it('holds at most COLD_HOLD_MAX pulls at once', () => {
    const { cold } = setup();
    for (let i = 0; i < COLD_HOLD_MAX; i++) expect(cold.tryHold()).toBe(true);
    expect(cold.tryHold()).toBe(false);
    cold.releaseHold();
    expect(cold.tryHold()).toBe(true);
    expect(cold.heldPulls).toBe(COLD_HOLD_MAX);
  });

  it('keeps at most MAX_CONFIGURED_GROUPS thresholds: a new group past that is refused, a known one still changes', () => {
    const { cold } = setup();
    for (let i = 0; i < MAX_CONFIGURED_GROUPS; i++) expect(cold.setGroupThreshold(`G${i}`, i)).toBe(true);
    expect(cold.setGroupThreshold('another', 1)).toBe(false);
    expect(cold.setGroupThreshold('G7', 70)).toBe(true);
    cold.removeGroupThreshold('G8');
    expect(cold.setGroupThreshold('another', 1)).toBe(true);
  });
});
