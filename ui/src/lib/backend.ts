// The only module that talks to Tauri: every command and event the window uses, typed with the
// declarations generated from the Rust types (types.ts).
import { invoke } from "@tauri-apps/api/core";
import { listen, type UnlistenFn } from "@tauri-apps/api/event";
import { open } from "@tauri-apps/plugin-dialog";
import type {
  ControlError,
  Overview,
  RootView,
  ServerSpec,
  ServerView,
  Status,
  ToolView,
} from "./types";

/** The event the app emits whenever something the window shows changed. */
export const CHANGED = "offload://changed";

/** A command's failure: the engine's `{code, message}`, or a message for anything else. */
export function errorOf(e: unknown): ControlError {
  if (e && typeof e === "object" && "message" in e) {
    const { code, message } = e as Partial<ControlError>;
    return { code: code ?? "internal", message: String(message) };
  }
  return { code: "internal", message: String(e) };
}

export const backend = {
  overview: () => invoke<Overview>("overview"),
  status: () => invoke<Status>("status"),
  setPaused: (paused: boolean) => invoke<Status>("set_paused", { paused }),

  servers: () => invoke<ServerView[]>("servers"),
  serverTools: (name: string) => invoke<ToolView[]>("server_tools", { name }),
  putServer: (previous: string | null, name: string, spec: ServerSpec) =>
    invoke<void>("put_server", { previous, name, spec }),
  removeServer: (name: string) => invoke<void>("remove_server", { name }),
  setServerEnabled: (name: string, enabled: boolean) =>
    invoke<void>("set_server_enabled", { name, enabled }),
  restartServer: (name: string) => invoke<number>("restart_server", { name }),

  roots: () => invoke<RootView[]>("roots"),
  addRoot: (path: string, writable: boolean) => invoke<void>("add_root", { path, writable }),
  removeRoot: (path: string) => invoke<void>("remove_root", { path }),
  setDefaultRoot: (path: string) => invoke<void>("set_default_root", { path }),
  setRootWritable: (path: string, writable: boolean) =>
    invoke<void>("set_root_writable", { path, writable }),

  autostart: () => invoke<boolean>("autostart"),
  setAutostart: (enabled: boolean) => invoke<boolean>("set_autostart", { enabled }),

  /** The native folder picker; null when the user cancels. */
  pickFolder: async (): Promise<string | null> => {
    const chosen = await open({ directory: true, multiple: false, title: "Allow a folder" });
    return typeof chosen === "string" ? chosen : null;
  },

  /** Calls `handler` on every change until the returned function is called. */
  onChanged: (handler: (status: Status) => void): (() => void) => {
    let stop: UnlistenFn | null = null;
    let done = false;
    listen<Status>(CHANGED, (event) => handler(event.payload)).then((unlisten) => {
      if (done) unlisten();
      else stop = unlisten;
    });
    return () => {
      done = true;
      stop?.();
    };
  },
};
