// Drives `offload serve --http` with the official TypeScript SDK (1.x) as a streamable-HTTP
// client with access tokens; the SDK validates structured content against output schemas.
// Usage: node http_client.mjs URL FULL_TOKEN READ_TOKEN. Exits non-zero on the first failure.
import assert from "node:assert/strict";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, full, read] = process.argv.slice(2);
const ok = (what) => console.log(`ok ${what}`);
const connect = async (token) => {
  const client = new Client({ name: "offload-interop-ts-http", version: "0" });
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }));
  return client;
};

await assert.rejects(connect(null), /401|Unauthorized|needs an access token/i);
ok("no token is refused");

let client = await connect(full);
assert.equal(client.getServerVersion().name, "offload");
const { tools } = await client.listTools();
assert.ok(tools.some((t) => t.name === "call_tool"));
ok("tools listed over HTTP");
let r = await client.callTool({ name: "call_tool", arguments: { server: "fx", tool_name: "echo", tool_args: { text: "hi ts" } } });
assert.match(r.content[0].text, /hi ts/);
ok("call_tool over HTTP");
r = await client.callTool({ name: "list_allowed_directories", arguments: {} });
assert.ok(!r.isError && r.structuredContent.default_directory);
ok("structured answer passes output-schema validation over HTTP");
await client.close();

client = await connect(read);
r = await client.callTool({ name: "call_tool", arguments: { server: "fx", tool_name: "echo", tool_args: { text: "x" } } });
assert.equal(r.isError, true);
assert.equal(r.structuredContent.error.code, "forbidden");
ok("read scope may not call (error passes output-schema validation)");
await client.close();
