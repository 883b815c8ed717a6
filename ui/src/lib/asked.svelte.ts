// What a screen asked the backend about one thing (a server's tools, its prompts, its log),
// kept on screen until a newer answer about the same thing replaces it: asking again after a
// status change or a reload does not blank the view for a moment, and a late answer to an
// older question never overwrites a newer one.
import { errorOf } from "./backend";

export class Asked<T> {
  value = $state<T | null>(null);
  error = $state<string | null>(null);
  // Plain fields, not state: reading them inside an effect must not make it run again.
  #of: string | null = null;
  #latest = 0;

  /** Nothing to show (and answers still on their way are dropped). */
  clear(): void {
    this.#latest += 1;
    this.#of = null;
    this.value = null;
    this.error = null;
  }

  /** Asks about `of`; what is shown about `of` stays until the answer comes. */
  ask(of: string, question: () => Promise<T>): void {
    const n = (this.#latest += 1);
    if (this.#of !== of) {
      this.#of = of;
      this.value = null;
      this.error = null;
    }
    question().then(
      (v) => {
        if (n !== this.#latest) return;
        this.value = v;
        this.error = null;
      },
      (e) => {
        if (n !== this.#latest) return;
        this.error = errorOf(e).message;
      },
    );
  }
}
