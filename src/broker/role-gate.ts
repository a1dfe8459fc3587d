// What a broker refuses because of its role, in one table (Java: each processor's rejectRequest, answered by the
// remoting layer, and the role checks at the top of a few processors). Wraps the processors of the listed codes
// once at start-up; the refusal is decided per request from the live role, so a role change needs no re-wiring.
// Codes not listed go straight to their processor.
import type { BrokerConfig } from '../common/config.js';
import { RequestCode } from '../common/request-code.js';
import { ResponseCode } from '../common/response-code.js';
import { type RemotingCommand, createResponse } from '../remoting/command.js';
import type { Processor, ProcessorTable } from '../remoting/dispatcher.js';

type Gate = (config: BrokerConfig) => RemotingCommand | undefined;

/** NettyRemotingAbstract.processRequestCommand's answer when a processor's rejectRequest() is true. */
export const REJECT_REQUEST_REMARK = '[REJECTREQUEST]system busy, start flow control for a while';

/**
 * 5.3.3 SendMessageProcessor.rejectRequest: a slave refuses sends and send-backs before anything runs. (4.9.8 lets
 * them run and the store refuses: SERVICE_NOT_AVAILABLE with the long disk remark — the store's own check.)
 */
const slaveRejectsWrites: Gate = (c) =>
  c.brokerRole === 'SLAVE' && c.haSemantics === '5.3.3' ? createResponse(ResponseCode.SYSTEM_BUSY, REJECT_REQUEST_REMARK) : undefined;

/** 5.3.3 PullMessageProcessor.rejectRequest: a slave without slaveReadEnable refuses every pull (4.9.8 serves them). */
const slaveRejectsReads: Gate = (c) =>
  c.brokerRole === 'SLAVE' && c.haSemantics === '5.3.3' && !c.slaveReadEnable
    ? createResponse(ResponseCode.SYSTEM_BUSY, REJECT_REQUEST_REMARK)
    : undefined;

/** EndTransactionProcessor.processRequest (both versions): SLAVE_NOT_AVAILABLE, no remark. */
const slaveRejectsEndTransaction: Gate = (c) =>
  c.brokerRole === 'SLAVE' ? createResponse(ResponseCode.SLAVE_NOT_AVAILABLE) : undefined;

/** 4.9.8 AdminBrokerProcessor.validateSlave (5.3.3 has it but never calls it: a slave takes the change). */
const slaveRejectsMetadataWrites: Gate = (c) =>
  c.brokerRole === 'SLAVE' && c.haSemantics === '4.9.8'
    ? createResponse(ResponseCode.SYSTEM_ERROR, "Can't modify topic or subscription group from slave broker, please execute it from master broker.")
    : undefined;

const GATES: ReadonlyMap<number, Gate> = new Map([
  [RequestCode.SEND_MESSAGE, slaveRejectsWrites],
  [RequestCode.SEND_MESSAGE_V2, slaveRejectsWrites],
  [RequestCode.SEND_BATCH_MESSAGE, slaveRejectsWrites],
  [RequestCode.CONSUMER_SEND_MSG_BACK, slaveRejectsWrites],
  [RequestCode.PULL_MESSAGE, slaveRejectsReads],
  [RequestCode.LITE_PULL_MESSAGE, slaveRejectsReads],
  [RequestCode.END_TRANSACTION, slaveRejectsEndTransaction],
  [RequestCode.UPDATE_AND_CREATE_TOPIC, slaveRejectsMetadataWrites],
  [RequestCode.DELETE_TOPIC_IN_BROKER, slaveRejectsMetadataWrites],
  [RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, slaveRejectsMetadataWrites],
  [RequestCode.DELETE_SUBSCRIPTIONGROUP, slaveRejectsMetadataWrites],
]);

/** The table with the role's refusals in front of the listed codes' processors. */
export function gateByRole(config: BrokerConfig, table: ProcessorTable): ProcessorTable {
  return table.map(([code, processor]) => {
    const gate = GATES.get(code);
    if (!gate) return [code, processor] as const;
    const gated: Processor = (req, rc) => gate(config) ?? processor(req, rc);
    return [code, gated] as const;
  });
}
