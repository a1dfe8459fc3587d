// Telemetry (Settings both ways, answers to server commands), Heartbeat and NotifyClientTermination
// (Java proxy grpc/v2/client/ClientActivity).
import * as grpc from '@grpc/grpc-js';
import { callContext, requireClientId } from './call-context.js';
import type { GrpcClientChannel, TelemetryStream } from './client-channel.js';
import type { GrpcServices, Msg, UnaryHandler } from './services.js';
import { Code, GrpcStatusError, OK, errorStatus, status } from './status.js';
import { validateConsumerGroup, validateTopic } from './validators.js';

const CONSUMER_TYPES = new Set(['PUSH_CONSUMER', 'SIMPLE_CONSUMER']);

export function heartbeat(s: GrpcServices): UnaryHandler {
  return (req, cc) => {
    const settings = s.clients.rawSettings(cc.clientId);
    if (!settings) return { status: status('UNRECOGNIZED_CLIENT_TYPE', 'cannot find client settings for this client') };
    const type = String(settings.client_type ?? '');
    if (type === 'PRODUCER') {
      for (const t of settings.publishing?.topics ?? []) s.clients.registerProducer(cc, String(t.name));
    } else if (CONSUMER_TYPES.has(type)) {
      const group = validateConsumerGroup(req.group);
      s.clients.registerConsumer(cc, group, type, settings.subscription?.subscriptions ?? [], false);
    } else {
      return { status: status('UNRECOGNIZED_CLIENT_TYPE', type || 'CLIENT_TYPE_UNSPECIFIED') };
    }
    return { status: OK };
  };
}

export function notifyClientTermination(s: GrpcServices): UnaryHandler {
  return (req, cc) => {
    const settings = s.clients.removeSettings(cc.clientId);
    if (!settings) return { status: status('UNRECOGNIZED_CLIENT_TYPE', 'cannot find client settings for this client') };
    const type = String(settings.client_type ?? '');
    if (CONSUMER_TYPES.has(type)) validateConsumerGroup(req.group);
    else if (type !== 'PRODUCER') return { status: status('UNRECOGNIZED_CLIENT_TYPE', type || 'CLIENT_TYPE_UNSPECIFIED') };
    s.clients.terminate(cc.clientId);
    return { status: OK };
  };
}

/** Java ClientActivity.processTelemetryException: 4xxxx codes → INVALID_ARGUMENT, else INTERNAL; the stream ends. */
function failStream(call: TelemetryStream, err: unknown): void {
  const st = errorStatus(err);
  const n = codeNumber(st.code);
  const code = n >= 40000 && n < 50000 ? grpc.status.INVALID_ARGUMENT : grpc.status.INTERNAL;
  call.emit('error', { code, details: `process client telemetryCommand failed. ${st.message}` });
}

function codeNumber(name: string): number {
  return (Code as Record<string, number>)[name] ?? Code.INTERNAL_SERVER_ERROR;
}

export function telemetry(s: GrpcServices, onChannel: (ch: GrpcClientChannel) => void = () => undefined): grpc.handleBidiStreamingCall<Msg, Msg> {
  return (call) => {
    const cc = callContext(call);
    const stream = call as unknown as TelemetryStream;
    const forget = () => s.clients.channelOf(cc.clientId)?.dropStream(stream);
    call.on('error', forget);
    call.on('cancelled', forget);
    call.on('end', () => {
      forget();
      call.end(); // the client half-closed: complete the call (Java ContextStreamObserver.onCompleted)
    });
    call.on('data', (cmd: Msg) => {
      try {
        requireClientId(cc);
      } catch (err) {
        // Java: a blank client id is answered with a status-only command; the stream stays open.
        call.write({ status: errorStatus(err) });
        return;
      }
      try {
        switch (cmd.command) {
          case 'settings':
            onSettings(s, cc, stream, cmd.settings, onChannel);
            break;
          case 'thread_stack_trace':
            s.clients.channelOf(cc.clientId)?.completeRelay(String(cmd.thread_stack_trace?.nonce ?? ''), String(cmd.status?.code ?? 'OK'), {
              thread_stack_trace: String(cmd.thread_stack_trace?.thread_stack_trace ?? ''),
            });
            break;
          case 'verify_message_result':
            s.clients.channelOf(cc.clientId)?.completeRelay(String(cmd.verify_message_result?.nonce ?? ''), String(cmd.status?.code ?? 'OK'), {});
            break;
          default:
            break; // Java ignores other commands (Node answers verify commands with a verify_message_command)
        }
      } catch (err) {
        failStream(stream, err);
      }
    });
  };
}

function onSettings(
  s: GrpcServices, cc: ReturnType<typeof callContext>, call: TelemetryStream, settings: Msg, onChannel: (ch: GrpcClientChannel) => void,
): void {
  const type = String(settings.client_type ?? '');
  let channel: GrpcClientChannel | undefined;
  if (settings.pub_sub === 'publishing' || (settings.publishing && !settings.subscription)) {
    for (const t of settings.publishing.topics ?? []) {
      const topic = validateTopic(t);
      channel = s.clients.registerProducer(cc, topic);
      channel.setStream(call, cc.peer);
    }
  } else if (settings.pub_sub === 'subscription' || settings.subscription) {
    const group = validateConsumerGroup(settings.subscription.group);
    channel = s.clients.registerConsumer(cc, group, type, settings.subscription.subscriptions ?? [], true);
    channel.setStream(call, cc.peer);
  } else {
    call.emit('error', { code: grpc.status.INVALID_ARGUMENT, details: 'there is no publishing or subscription data in settings' });
    return;
  }
  if (channel) onChannel(channel);
  s.clients.storeSettings(cc.clientId, settings);
  const reply = { status: OK, settings: s.clients.mergedSettings(cc.clientId) };
  if (!channel || !channel.writeCommand(reply)) call.write(reply);
}

export { GrpcStatusError };
