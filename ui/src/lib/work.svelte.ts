// One change at a time from a screen: busy while it runs, its error kept to show where it
// happened, then what the screen shows reloaded.
import { errorOf } from "./backend";

export class Work {
  busy = $state(false);
  error = $state<string | null>(null);

  constructor(private readonly reload: () => Promise<unknown>) {}

  async run(action: () => Promise<unknown>): Promise<void> {
    this.busy = true;
    this.error = null;
    try {
      await action();
      await this.reload();
    } catch (e) {
      this.error = errorOf(e).message;
    } finally {
      this.busy = false;
    }
  }
}
