// The admin web page's HTTP side (ours, no Java counterpart: the official Dashboard is a separate application):
// off unless adminWebPort is set, bound to adminWebHost (127.0.0.1 by default). Read-only JSON under /api.
import type http from 'node:http';
import type { Logger } from '../../common/logger.js';
import type { RemotingClient } from '../../remoting/client.js';
import type { BrokerContext } from '../context.js';
import { startHttpEndpoint } from '../metrics/metrics-server.js';
import { CONSOLE_PAGE } from './console-page.js';
import { RateHistory, clusterView, groupsView, messageLookup, topicsView } from './console-data.js';

export interface WebConsole {
  readonly port: number;
  close(): Promise<void>;
}

export async function startWebConsole(ctx: BrokerContext, client: RemotingClient, logger: Logger): Promise<WebConsole> {
  const rates = new RateHistory(ctx);
  const json = (res: http.ServerResponse, value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  const server = await startHttpEndpoint(
    { portKey: 'adminWebPort', host: ctx.config.adminWebHost, port: ctx.config.adminWebPort },
    (req, res) => {
      const url = new URL(req.url ?? '/', 'http://console');
      const route = async () => {
        switch (url.pathname) {
          case '/':
            return res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(CONSOLE_PAGE);
          case '/api/info':
            return json(res, { brokerName: ctx.config.brokerName, cluster: ctx.config.brokerClusterName, brokerAddr: ctx.brokerAddr(), role: ctx.config.brokerRole });
          case '/api/cluster':
            return json(res, await clusterView(ctx, client));
          case '/api/topics':
            return json(res, topicsView(ctx));
          case '/api/groups':
            return json(res, groupsView(ctx));
          case '/api/rates':
            return json(res, rates.view());
          case '/api/message':
            return json(res, await messageLookup(ctx, { id: url.searchParams.get('id') ?? undefined, topic: url.searchParams.get('topic') ?? undefined, key: url.searchParams.get('key') ?? undefined }));
          default:
            return res.writeHead(404).end();
        }
      };
      if (req.method !== 'GET') return void res.writeHead(405).end();
      route().catch((err: Error) => {
        logger.warn({ err: err.message, path: url.pathname }, 'admin web request failed');
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: err.message }));
      });
    },
    logger,
  );
  rates.start();
  const addr = server.address() as import('node:net').AddressInfo;
  logger.info({ url: `http://${addr.address}:${addr.port}/` }, 'admin web page listening');
  return {
    port: addr.port,
    async close() {
      rates.stop();
      await new Promise((r) => server.close(r));
    },
  };
}
