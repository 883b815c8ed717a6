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

export interface MockOptions {
  /** Gets each command of the app and its arguments, in order. */
  calls?: [string, unknown][];
  /** Answers for Tauri's plugin commands (`plugin:dialog|open`, ...); others answer nothing. */
  plugins?: Record<string, (args: any) => unknown>;
  /** Tauri's event system mocked too, for screens that listen (`emit` reaches them). */
  events?: boolean;
}

/** Answers the window's commands with `handlers`. */
export function mockCommands(handlers: Handlers, options: MockOptions = {}): void {
  mockIPC(
    (cmd, args) => {
      if (cmd.startsWith("plugin:")) return options.plugins?.[cmd]?.(args);
      options.calls?.push([cmd, args]);
      const handler = handlers[cmd as keyof Commands] as ((a: unknown) => unknown) | undefined;
      if (!handler) throw new Error(`no handler for the command ${cmd} in this test`);
      return handler(args);
    },
    { shouldMockEvents: options.events ?? false },
  );
}
