import type { Logger } from '../common/logger.js';
import { saveConfigFile, saveConfigFileAsync } from './config-file.js';

/**
 * Saves one config table (topics.json, subscriptionGroup.json) off the event loop: a change asks for a save; at
 * most one save runs at a time and changes made meanwhile are folded into one more save after it. The text is
 * taken when the save starts, so the file always holds a whole, recent version (temp file + fsync + rename).
 * Shutdown waits for the running save, then writes synchronously.
 */
export class CoalescingSaver {
  private running: Promise<void> | null = null;
  private again = false;

  constructor(
    private readonly file: string,
    private readonly encode: () => string,
    private readonly logger: Logger,
    private readonly what: string,
  ) {}

  /** Schedules a save of the current table. */
  request(): void {
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.loop();
  }

  private async loop(): Promise<void> {
    try {
      do {
        this.again = false;
        try {
          await saveConfigFileAsync(this.file, this.encode());
        } catch (err) {
          this.logger.error({ err, file: this.file }, `failed to persist ${this.what}`);
        }
      } while (this.again);
    } finally {
      this.running = null;
    }
  }

  /** Resolves when no save is running. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  /** Synchronous save (start-up, shutdown after idle()). */
  saveSync(): void {
    try {
      saveConfigFile(this.file, this.encode());
    } catch (err) {
      this.logger.error({ err, file: this.file }, `failed to persist ${this.what}`);
    }
  }
}
