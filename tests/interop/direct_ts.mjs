// Offload in direct mode seen by the official TypeScript SDK (1.x), which validates each
// tool's structuredContent against its outputSchema: an upstream tool's answer must validate
// against what Offload advertises, and so must a big answer that Offload stored and linked.
// Usage: node direct_ts.mjs OFFLOAD_BIN (OFFLOAD_CONFIG names a config with server-everything
// as "everything"). Exits non-zero on the first failure.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const offload = process.argv[2];
const transport = new StdioClientTransport({
  command: offload,
  args: ["mcp", "--expose", "direct", "--mode", "embedded"],
  env: process.env,
  stderr: "ignore",
});
const client = new Client({ name: "offload-interop-ts-direct", version: "0" });
await client.connect(transport);
const ok = (what) => console.log(`ok ${what}`);

const { tools } = await client.listTools();
const structured = tools.find((t) => t.name === "everything__get-structured-content");
assert.ok(structured && structured.outputSchema, "listed with an output schema");
ok("get-structured-content listed with its (widened) output schema");

// Small enough: the upstream's own answer, validated by the SDK against the advertised schema.
let r = await client.callTool({ name: "everything__get-structured-content", arguments: { location: "Chicago" } });
assert.ok(!r.isError && r.structuredContent, JSON.stringify(r));
ok("an upstream answer validates against the advertised schema");

// With a tiny inline budget (the config sets one), the same answer is stored and linked; the
// link's structured content must validate too.
r = await client.callTool({ name: "everything__get-sum", arguments: { a: 1, b: 2 } });
assert.ok(!r.isError, JSON.stringify(r));
r = await client.callTool({ name: "everything__get-structured-content", arguments: { location: "New York" } });
assert.ok(!r.isError && r.structuredContent && r.structuredContent.path, JSON.stringify(r));
ok("a stored answer's link validates against the advertised schema");
await client.close();
