import type { ClientChannel } from '../../remoting/dispatcher.js';

/** Java SubscriptionData (heartbeat body / pull subscription). */
export interface SubscriptionData {
  topic: string;
  subString: string;
  /** 'TAG' or 'SQL92'. */
  expressionType: string;
  tagsSet: string[];
  codeSet: number[];
  subVersion: number;
  classFilterMode: boolean;
}

/** One client channel of a group (Java ClientChannelInfo). */
export interface ClientChannelInfo {
  channel: ClientChannel;
  clientId: string;
  language: string;
  version: number;
  lastUpdateTimestamp: number;
}

export interface ConsumerGroupInfo {
  groupName: string;
  /** 'CONSUME_ACTIVELY' | 'CONSUME_PASSIVELY' | 'CONSUME_POP' */
  consumeType: string;
  /** 'CLUSTERING' | 'BROADCASTING' */
  messageModel: string;
  consumeFromWhere: string;
  channels: Map<ClientChannel, ClientChannelInfo>;
  subscriptions: Map<string, SubscriptionData>;
  lastUpdateTimestamp: number;
}

/** Java MessageQueue; fastjson writes its properties in this (alphabetical) order. */
export interface MessageQueue {
  brokerName: string;
  queueId: number;
  topic: string;
}
