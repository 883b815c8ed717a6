// What a script sees besides the language: `tools`, `offload`, `console`, `setTimeout`,
// `ToolError`. Each reaches the host through `__host` (a JSON request, a JSON answer), which
// this removes from the globals before the script runs.
"use strict";
(() => {
  const host = globalThis.__host;
  const log = globalThis.__log;
  const sleep = globalThis.__sleep;
  delete globalThis.__host;
  delete globalThis.__log;
  delete globalThis.__sleep;

  class ToolError extends Error {
    constructor(server, tool, message) {
      super(message);
      this.name = "ToolError";
      this.server = server;
      this.tool = tool;
    }
  }

  const ask = async (request) => {
    const answer = JSON.parse(await host(JSON.stringify(request)));
    if (answer.ok) return answer.value;
    if (request.kind === "tool") throw new ToolError(request.server, request.tool, answer.error.message);
    const error = new Error(answer.error.message);
    error.code = answer.error.code;
    throw error;
  };

  const call = (server, tool, args) =>
    ask({ kind: "tool", server: String(server), tool: String(tool), args: args ?? {} });
  // `tools.github.search_issues(args)`; `then` is not a tool, so `await tools.x` is not a call.
  const tools = new Proxy(Object.freeze({ call }), {
    get(target, server) {
      if (server === "call") return call;
      if (typeof server !== "string" || server === "then") return undefined;
      return new Proxy(Object.freeze({}), {
        get(_, tool) {
          if (typeof tool !== "string" || tool === "then") return undefined;
          return (args) => call(server, tool, args);
        },
      });
    },
  });

  const offload = Object.freeze({
    store: (value, options = {}) =>
      ask({ kind: "store", value, name: options.name ?? null, format: options.format ?? null }),
    query: (path, sql) => ask({ kind: "query", path: String(path), sql: String(sql) }),
    read: (path, options = {}) => ask({ kind: "read", path: String(path), options }),
    schema: (path) => ask({ kind: "schema", path: String(path) }),
  });

  const show = (value) => {
    if (typeof value === "string") return value;
    try {
      return JSON.stringify(value) ?? String(value);
    } catch {
      return String(value);
    }
  };
  const line = (...values) => log(values.map(show).join(" "));
  const console = Object.freeze({ log: line, info: line, warn: line, error: line, debug: line });

  const setTimeout = (callback, ms = 0, ...args) => {
    sleep(Number(ms) || 0).then(() => callback(...args));
  };

  Object.assign(globalThis, { tools, offload, console, setTimeout, ToolError });
  globalThis.__run = async (body) => {
    const value = await body();
    return JSON.stringify(value === undefined ? null : value) ?? "null";
  };
})();
