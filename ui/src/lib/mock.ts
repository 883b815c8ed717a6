// The app's commands in tests: handlers typed by the map Rust declares (commands.ts), so a test
// that answers a command the app does not have, reads an argument it does not send, or answers
// with the wrong shape fails `npm run check`. A command without a handler fails the test.
import { mockIPC } from "@tauri-apps/api/mocks";
import type { Commands } from "./commands";

export type Handlers = {
  [C in keyof Commands]?: (
    args: Commands[C]["args"],
  ) => Commands[C]["answer"] | Promise<Commands[C]["answer"]>;
};

/** Answers the window's commands with `handlers`; `calls` gets each command and its arguments. */
export function mockCommands(handlers: Handlers, calls?: [string, unknown][]): void {
  mockIPC((cmd, args) => {
    // Tauri's own plugins (events, dialogs) are not the app's commands.
    if (cmd.startsWith("plugin:")) return undefined;
    const name = cmd as keyof Commands;
    calls?.push([cmd, args]);
    const handler = handlers[name] as ((a: unknown) => unknown) | undefined;
    if (!handler) throw new Error(`no handler for the command ${cmd} in this test`);
    return handler(args);
  });
}
