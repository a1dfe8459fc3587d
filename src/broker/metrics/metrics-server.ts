// The Prometheus endpoint (Java: OpenTelemetry's PrometheusHttpServer on metricsPromExporterHost:Port, any path
// answers the exposition; we answer GET /metrics and GET /) and the RPC-latency hook around every request.
import type http from 'node:http';
import { ConfigError } from '../../common/config-schema.js';
import { RequestCode } from '../../common/request-code.js';
import { ResponseCode } from '../../common/response-code.js';
import type { Logger } from '../../common/logger.js';
import { type RemotingCommand, isOneway } from '../../remoting/command.js';
import type { RequestHook } from '../../remoting/dispatcher.js';
import type { BrokerMetrics } from './broker-metrics.js';

/** Listens; a port in use (or any bind failure) is a ConfigError naming the key, so start-up stops with exit 2. */
export async function startHttpEndpoint(
  what: { portKey: string; host: string; port: number },
  handler: http.RequestListener,
  logger: Logger,
): Promise<http.Server> {
  // node:http is loaded by the first endpoint (metrics or web console are off by default): ~5 ms less at start-up
  const { createServer } = await import('node:http');
  const server = createServer(handler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const where = `${what.host || '0.0.0.0'}:${what.port}`;
      reject(new ConfigError(err.code === 'EADDRINUSE' ? `${what.portKey}: ${where} is already in use` : `${what.portKey}: cannot listen on ${where}: ${err.message}`));
    });
    server.listen(what.port, what.host || undefined, () => resolve());
  });
  server.on('error', (err) => logger.error({ err }, 'http endpoint error'));
  return server;
}

export function metricsHandler(metrics: BrokerMetrics): http.RequestListener {
  return (req, res) => {
    if (req.method !== 'GET' || !(req.url === '/metrics' || req.url === '/')) {
      res.writeHead(404).end();
      return;
    }
    metrics.scrape().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: Error) => res.writeHead(500).end(err.message),
    );
  };
}

/** Admin requests whose time also goes to the topic / group creation histograms (Java AdminBrokerProcessor). */
const CREATE_CODES: ReadonlySet<number> = new Set([
  RequestCode.UPDATE_AND_CREATE_TOPIC, RequestCode.UPDATE_AND_CREATE_TOPIC_LIST,
  RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST,
]);

/** The topic a topic-creating request names: its header's, or the first topicName of a list's JSON body. */
function firstTopicOf(req: RemotingCommand): string | undefined {
  if (req.code === RequestCode.UPDATE_AND_CREATE_TOPIC) return req.extFields?.topic;
  if (req.code !== RequestCode.UPDATE_AND_CREATE_TOPIC_LIST || !req.body) return undefined;
  return /"topicName":"((?:[^"\\]|\\.)*)"/.exec(req.body.toString('utf8'))?.[1];
}

/**
 * rocketmq_rpc_latency per request code and answer (Java RemotingMetricsManager via NettyRemotingAbstract), and the
 * creation times of topics and groups.
 */
export function rpcMetricsHook(metrics: BrokerMetrics): RequestHook {
  const started = new WeakMap<RemotingCommand, number>();
  return {
    before(req) {
      started.set(req, performance.now());
      return undefined;
    },
    after(req, res) {
      const t0 = started.get(req);
      // Java records an answer written (NettyRemotingAbstract.writeResponse): nothing when there is none
      if (t0 === undefined || !res) return;
      const elapsedMs = performance.now() - t0;
      metrics.rpc(req.code, res?.code, elapsedMs, isOneway(req), req.suspended === true);
      if (CREATE_CODES.has(req.code)) metrics.adminCreateTimed(req.code, res.code === ResponseCode.SUCCESS, elapsedMs, firstTopicOf(req));
    },
  };
}
