// VIEW_BROKER_STATS_DATA (315): one stats item's minute, hour and day figures, what mqadmin statsAll (TOPIC_PUT_NUMS
// by topic, GROUP_GET_NUMS by topic@group) and the dashboard read. Java: AdminBrokerProcessor.ViewBrokerStatsData.
import { JavaDouble, stringifyFastjson } from '../../common/fastjson.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import { HeaderReader, type RemotingCommand, createResponse } from '../../remoting/command.js';
import type { ProcessorTable } from '../../remoting/dispatcher.js';
import type { BrokerContext } from '../context.js';
import type { StatsSnapshot, StatsWindow } from '../stats-items.js';

/** Java BrokerStatsItem. */
function statsItemJson(s: StatsSnapshot): Record<string, unknown> {
  return { avgpt: new JavaDouble(s.avgpt), sum: s.sum, tps: new JavaDouble(s.tps) };
}

function viewBrokerStatsData(ctx: BrokerContext, req: RemotingCommand): RemotingCommand {
  const h = new HeaderReader(req.extFields);
  const name = h.str('statsName');
  const key = h.str('statsKey');
  const window = (w: StatsWindow) => ctx.stats.items.snapshot(name, key, w);
  const minute = window('minute');
  if (!minute) return createResponse(ResponseCode.SYSTEM_ERROR, `The stats <${name}> <${key}> not exist`);
  const data = { statsDay: statsItemJson(window('day')!), statsHour: statsItemJson(window('hour')!), statsMinute: statsItemJson(minute) };
  return createResponse(ResponseCode.SUCCESS, undefined, {}, Buffer.from(stringifyFastjson(data)));
}

export function adminStatsProcessors(ctx: BrokerContext): ProcessorTable {
  return [[RequestCode.VIEW_BROKER_STATS_DATA, (req) => viewBrokerStatsData(ctx, req)]];
}
