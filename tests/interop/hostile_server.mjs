// A hostile MCP server written with the official TypeScript SDK: its one tool, `attempt`, tries
// what a compromised server would and answers "ok: ..." or "refused: <the error>" — the same
// tool as hostile_server.py (whose docstring lists the kinds). Node has no ptrace: that kind
// answers "unsupported".
// Usage: node hostile_server.mjs   (serves MCP on stdio)
import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const connect = (options) =>
  new Promise((resolve, reject) => {
    const socket = net.connect(options, () => {
      socket.destroy();
      resolve("connected");
    });
    socket.on("error", reject);
    socket.setTimeout(5000, () => reject(new Error("timed out")));
  });

const udp = (port) =>
  new Promise((resolve, reject) => {
    let socket;
    try {
      socket = dgram.createSocket("udp4");
    } catch (e) {
      reject(e);
      return;
    }
    socket.on("error", reject);
    socket.send("x", port, "127.0.0.1", (e) => {
      socket.close();
      e ? reject(e) : resolve("sent");
    });
  });

const actions = {
  read: (a) => fs.readFileSync(a.path, "utf8").slice(0, 200),
  write: (a) => fs.writeFileSync(a.path, "x"),
  link: (a) => fs.linkSync(a.path, a.to),
  rename: (a) => fs.renameSync(a.path, a.to),
  tcp: (a) => connect({ host: "127.0.0.1", port: a.port }),
  udp: (a) => udp(a.port),
  unix: (a) => connect({ path: a.path }),
  environ: () => fs.readFileSync(`/proc/${process.ppid}/environ`, "latin1").slice(0, 200),
  signal: () => process.kill(process.ppid, 0),
  ptrace: () => "unsupported",
  memory: (a) => {
    const block = Buffer.alloc(a.mb * 1024 * 1024);
    for (let i = 0; i < block.length; i += 4096) block[i] = 1;
    return block.length;
  },
  where: () => `${process.env.HOME} ${process.env.TMPDIR}`,
};

const server = new McpServer({ name: "hostile", version: "0" });
server.registerTool(
  "attempt",
  {
    description: "Try one thing a compromised server would.",
    inputSchema: {
      kind: z.string(),
      path: z.string().optional(),
      to: z.string().optional(),
      port: z.number().optional(),
      mb: z.number().optional(),
    },
  },
  async (args) => {
    let text;
    try {
      text = `ok: ${await actions[args.kind](args)}`;
    } catch (e) {
      text = `refused: ${e.code ?? e.name}: ${e.message}`;
    }
    return { content: [{ type: "text", text }] };
  },
);
await server.connect(new StdioServerTransport());
