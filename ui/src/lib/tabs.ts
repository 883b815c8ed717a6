// The tabs pattern's keys (WAI-ARIA): Left and Right arrows, Home and End choose another tab of
// the tab list, and the focus follows to it. One tab is in the Tab order (tabindex 0).
import { tick } from "svelte";

/** A keydown handler for a `role="tablist"` element whose tabs are `tabs()`, `current()` the open
 * one, `choose` opening another. */
export function tabKeys<T>(tabs: () => readonly T[], current: () => T, choose: (tab: T) => void) {
  return async (e: KeyboardEvent) => {
    const list = tabs();
    const at = list.indexOf(current());
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: list.length - 1 }[e.key];
    if (to === undefined || list.length === 0) return;
    e.preventDefault();
    const bar = e.currentTarget as HTMLElement;
    choose(list[(to + list.length) % list.length]);
    await tick();
    bar.querySelector<HTMLElement>('[role="tab"][aria-selected="true"]')?.focus();
  };
}
