#!/usr/bin/env node
import { Command } from 'commander';
import { ConfigError } from './common/config.js';
import { createLogger } from './common/logger.js';
import { applyServerGcFlags } from './cli/gc-flags.js';
import { runCommand, type RunMode } from './cli/run.js';

/** `rmq start | namesrv | broker`: the CLI. Any config key may be given as `--key=value`. */
const program = new Command();
program
  .name('rmq')
  .description('rocketmq-ts: an Apache RocketMQ-compatible nameserver and broker')
  .showHelpAfterError();

function addServerCommand(name: RunMode, description: string): void {
  program
    .command(name)
    .description(description)
    .option('-c, --config <file>', 'properties file (broker.conf / namesrv properties)')
    .option('-n, --namesrvAddr <addrs>', 'nameserver address(es), `;`-separated')
    .option('--pretty', 'human-readable log lines instead of JSON (the default when stderr is a terminal)')
    .allowUnknownOption(true)
    .allowExcessArguments(true)
    .helpOption('-h, --help', 'show help; config keys are given as --key=value, e.g. --listenPort=20911')
    .action(async (opts: { config?: string; namesrvAddr?: string; pretty?: boolean }, cmd: Command) => {
      const logger = createLogger(undefined, { pretty: opts.pretty ?? process.stderr.isTTY === true });
      applyServerGcFlags();
      try {
        const running = await runCommand(name, { configFile: opts.config, namesrvAddr: opts.namesrvAddr, extraArgs: cmd.args }, logger);
        let stopping = false;
        const stop = (signal: string) => {
          if (stopping) return;
          stopping = true;
          logger.info({ signal }, 'shutting down');
          const force = setTimeout(() => process.exit(1), 15000);
          force.unref();
          running.shutdown().then(
            () => process.exit(0),
            (err) => {
              logger.error({ err }, 'shutdown failed');
              process.exit(1);
            },
          );
        };
        // Handlers first: whoever reads the ready line may signal us at once.
        process.on('SIGINT', () => stop('SIGINT'));
        process.on('SIGTERM', () => stop('SIGTERM'));
        process.stdout.write(`${running.readyLine}\n`);
      } catch (err) {
        if (err instanceof ConfigError) {
          process.stderr.write(`rmq: bad configuration: ${err.message}\n`);
          process.exit(2);
        }
        process.stderr.write(`rmq: failed to start: ${(err as Error).message}\n`);
        process.exit(1);
      }
    });
}

addServerCommand('start', 'run a nameserver and a broker in one process (development mode)');
addServerCommand('namesrv', 'run a nameserver');
addServerCommand('broker', 'run a broker');

program.parseAsync(process.argv).catch((err) => {
  process.stderr.write(`rmq: ${(err as Error).message}\n`);
  process.exit(2);
});
