// Offload in direct mode seen by the official TypeScript SDK (1.x), which validates each
// tool's structuredContent against its outputSchema: an upstream tool's answer must validate
// against what Offload advertises, and so must a big answer that Offload stored and linked.
// Then server-everything's prompts, resources, templates, completions and returned links, as
// this SDK sees them through Offload (it validates every answer against its schemas).
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

const { prompts } = await client.listPrompts();
const argsPrompt = prompts.find((p) => p.name === "everything__args-prompt");
assert.deepEqual(argsPrompt?.arguments?.map((a) => a.name), ["city", "state"], JSON.stringify(prompts));
const got = await client.getPrompt({ name: "everything__args-prompt", arguments: { city: "Lyon", state: "Rhône" } });
assert.ok(JSON.stringify(got.messages).includes("Lyon"), JSON.stringify(got));
ok("a prompt listed under its exposed name and got with its arguments");

const done = await client.complete({
  ref: { type: "ref/prompt", name: "everything__completable-prompt" },
  argument: { name: "department", value: "M" },
});
assert.ok(done.completion.values.includes("Marketing"), JSON.stringify(done));
ok(`a prompt argument completed: ${done.completion.values.join(", ")}`);

const { resources } = await client.listResources();
assert.ok(resources.some((x) => x.uri === "demo://resource/static/document/features.md"), JSON.stringify(resources.map((x) => x.uri)));
assert.ok(resources.some((x) => x.uri.startsWith("file://")), "the stored answer is a resource too");
const read = await client.readResource({ uri: "demo://resource/static/document/features.md" });
assert.ok(read.contents[0].text.length > 100, JSON.stringify(read).slice(0, 300));
ok("upstream resources listed beside the stored ones and read");

const { resourceTemplates } = await client.listResourceTemplates();
assert.ok(resourceTemplates.some((t) => t.uriTemplate === "demo://resource/dynamic/text/{resourceId}"));
const links = await client.callTool({ name: "everything__get-resource-links", arguments: { count: 2 } });
const link = links.content.find((c) => c.type === "resource_link");
const linked = await client.readResource({ uri: link.uri });
assert.equal(linked.contents[0].uri, link.uri);
ok(`a returned resource_link read through Offload: ${link.uri}`);
await client.close();
