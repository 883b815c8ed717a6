import { tick } from "svelte";

// Where the keyboard focus goes after an action, so it is never dropped on the page: what an
// action opens (a form, a confirmation) takes the focus, and when it closes the focus goes back
// to what opened it, or to the row that took a deleted one's place.
//
//   <button {@attach returnsFocus("server-edit")} onclick={open}>Edit</button>
//   <input {@attach focusHere} />                    (the opened form's first field)
//   function close() { focusBack("server-edit"); open = false; }
//
// `keepingFocus` runs an action during which its button is disabled (which drops the focus) and
// gives the focus back to that button after, or to a marked element if the button is gone.
//
// The marked element takes the focus when `focusBack` names it, whether it stayed on the page or
// is drawn again (or only later, once a reload lists it).

const back = $state<{ to: string | null; at: number }>({ to: null, at: 0 });

/** A key not honoured within this long is dropped (its element never came back). */
const PENDING_MS = 3000;

/** Focuses the element as it appears: the first field of a form just opened, the safe answer
 * of a confirmation. */
export function focusHere(node: HTMLElement) {
  node.focus();
}

/** The focus goes to the element marked `returnsFocus(key)`, now or when it appears. */
export function focusBack(key: string) {
  back.to = key;
  back.at = Date.now();
}

/** Marks an element the focus can go back to. */
export function returnsFocus(key: string) {
  return (node: HTMLElement) => {
    if (back.to !== key) return;
    back.to = null;
    if (Date.now() - back.at <= PENDING_MS) node.focus();
  };
}

const dropped = () => !document.activeElement || document.activeElement === document.body;

/** Runs `action`; if the focus was dropped meanwhile, it goes back to the element that had it
 * when the action started, or, if that is gone, to the one marked `fallback`. */
export async function keepingFocus<T>(action: () => Promise<T>, fallback?: string): Promise<T> {
  const started = document.activeElement;
  try {
    return await action();
  } finally {
    await tick();
    if (dropped()) {
      if (started instanceof HTMLElement && started !== document.body && started.isConnected) started.focus();
      else if (fallback) focusBack(fallback);
    }
  }
}
