// One change at a time from a screen: busy while it runs, its error kept to show where it
// happened, then what the screen shows reloaded. The buttons are disabled meanwhile, which drops
// the keyboard focus; it goes back to the button that started the work once that is enabled again.
import { errorOf } from "./backend";
import { keepingFocus } from "./focus.svelte";

export class Work {
  busy = $state(false);
  error = $state<string | null>(null);

  constructor(private readonly reload: () => Promise<unknown>) {}

  run(action: () => Promise<unknown>): Promise<void> {
    return keepingFocus(async () => {
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
    });
  }
}
