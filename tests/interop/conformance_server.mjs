// An upstream for the official MCP conformance suite's tool scenarios, written with the official
// TypeScript SDK (low-level Server, so every schema goes out exactly as written here). It offers
// the `test_*` tools, prompts and resources (a template, a subscribable resource) the scenarios
// call, and completion of prompt arguments. The conformance test puts it behind Offload (stdio, with
// `prefix: false`) and also serves it directly (`--http PORT`), so both can be scored alike.
//
// Usage: node conformance_server.mjs            (stdio)
//        node conformance_server.mjs --http PORT (streamable HTTP at http://127.0.0.1:PORT/mcp)
import { randomUUID } from "node:crypto";
import http from "node:http";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

// A 1×1 red PNG and a 4-sample silent WAV.
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = Buffer.concat([
  Buffer.from("RIFF"), le32(36 + 8), Buffer.from("WAVEfmt "), le32(16), le16(1), le16(1),
  le32(8000), le32(16000), le16(2), le16(16), Buffer.from("data"), le32(8), Buffer.alloc(8),
]).toString("base64");
function le32(n) { const b = Buffer.alloc(4); b.writeUInt32LE(n); return b; }
function le16(n) { const b = Buffer.alloc(2); b.writeUInt16LE(n); return b; }

const none = { type: "object", properties: {} };
const TOOLS = [
  { name: "test_simple_text", description: "Answers with one text block.", inputSchema: none },
  { name: "test_image_content", description: "Answers with a 1x1 PNG image.", inputSchema: none },
  { name: "test_audio_content", description: "Answers with a short WAV clip.", inputSchema: none },
  { name: "test_embedded_resource", description: "Answers with an embedded text resource.", inputSchema: none },
  { name: "test_multiple_content_types", description: "Answers with text, an image and a resource.", inputSchema: none },
  { name: "test_tool_with_logging", description: "Logs three messages while it runs.", inputSchema: none },
  { name: "test_tool_with_progress", description: "Reports progress 0, 50, 100 of 100.", inputSchema: none },
  { name: "test_error_handling", description: "Always fails with isError.", inputSchema: none },
  {
    name: "test_sampling",
    description: "Asks the client's model to answer a prompt (sampling).",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  },
  {
    name: "test_elicitation",
    description: "Asks the user for input (elicitation).",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
  { name: "test_trigger_tool_change", description: "Adds or removes a tool and says the tool list changed.", inputSchema: none },
  { name: "test_trigger_prompt_change", description: "Adds or removes a prompt and says the prompt list changed.", inputSchema: none },
  {
    name: "test_app_tool",
    description: "A tool with an MCP Apps interface.",
    inputSchema: none,
    _meta: { ui: { resourceUri: "ui://widget/greeting.html" } },
  },
  { name: "test_missing_capability", description: "Needs the client's sampling capability.", inputSchema: none },
  { name: "test_logging_tool", description: "Logs one message while it runs.", inputSchema: none },
  { name: "test_streaming_elicitation", description: "Asks the user for input (elicitation) while it runs.", inputSchema: none },
  {
    name: "json_schema_2020_12_tool",
    description: "A tool whose input schema uses JSON Schema 2020-12 keywords.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { $anchor: "addressDef", type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: {
        name: { type: "string" },
        address: { $ref: "#/$defs/address" },
        contactMethod: { type: "string", enum: ["phone", "email"] },
        phone: { type: "string" },
        email: { type: "string" },
      },
      allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
      if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
      then: { required: ["phone"] },
      else: { required: ["email"] },
      additionalProperties: false,
    },
  },
];

const PROMPTS = [
  { name: "test_simple_prompt", description: "A prompt without arguments." },
  {
    name: "test_prompt_with_arguments",
    description: "A prompt with two arguments.",
    arguments: [
      { name: "arg1", description: "First test argument", required: true },
      { name: "arg2", description: "Second test argument", required: true },
    ],
  },
  {
    name: "test_prompt_with_embedded_resource",
    description: "A prompt that embeds a resource.",
    arguments: [{ name: "resourceUri", description: "URI of the resource to embed", required: true }],
  },
  { name: "test_prompt_with_image", description: "A prompt with an image." },
];

const RESOURCES = [
  { uri: "test://static-text", name: "static-text", description: "A static text resource.", mimeType: "text/plain" },
  { uri: "test://static-binary", name: "static-binary", description: "A static PNG image.", mimeType: "image/png" },
  { uri: "test://watched-resource", name: "watched-resource", description: "A resource one can subscribe to.", mimeType: "text/plain" },
  { uri: "ui://widget/greeting.html", name: "greeting", description: "An MCP Apps interface.", mimeType: "text/html;profile=mcp-app" },
];
const APP_HTML = "<!doctype html><html><body><p id=greeting>Hello from an MCP App</p></body></html>";
const TEMPLATES = [
  { uriTemplate: "test://template/{id}/data", name: "template", description: "Data for an id.", mimeType: "application/json" },
];

function readResource(uri) {
  if (uri === "test://static-text") {
    return [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }];
  }
  if (uri === "test://static-binary") return [{ uri, mimeType: "image/png", blob: PNG }];
  if (uri === "test://watched-resource") return [{ uri, mimeType: "text/plain", text: "Watched resource content." }];
  if (uri === "ui://widget/greeting.html") {
    return [{ uri, mimeType: "text/html;profile=mcp-app", text: APP_HTML, _meta: { ui: { prefersBorder: true } } }];
  }
  const m = /^test:\/\/template\/([^/]+)\/data$/.exec(uri);
  if (m) {
    return [{ uri, mimeType: "application/json", text: JSON.stringify({ id: m[1], templateTest: true, data: `Data for ID: ${m[1]}` }) }];
  }
  throw new McpError(-32602, "Resource not found", { uri });
}

function getPrompt(name, args) {
  const user = (content) => ({ role: "user", content });
  switch (name) {
    case "test_simple_prompt":
      return { messages: [user({ type: "text", text: "This is a simple prompt for testing." })] };
    case "test_prompt_with_arguments":
      return { messages: [user({ type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` })] };
    case "test_prompt_with_embedded_resource":
      return {
        messages: [
          user({ type: "resource", resource: { uri: args.resourceUri, mimeType: "text/plain", text: "Embedded resource content for testing." } }),
          user({ type: "text", text: "Please process the embedded resource above." }),
        ],
      };
    case "test_prompt_with_image":
      return {
        messages: [
          user({ type: "image", data: PNG, mimeType: "image/png" }),
          user({ type: "text", text: "Please analyze the image above." }),
        ],
      };
    default:
      throw new McpError(-32602, `unknown prompt ${name}`);
  }
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// What the trigger tools add and remove (shared by every session of this process).
const dynamic = { tool: false, prompt: false };
const DYNAMIC_TOOL = { name: "test_dynamic_tool", description: "Appears and disappears.", inputSchema: none };
const DYNAMIC_PROMPT = { name: "test_dynamic_prompt", description: "Appears and disappears." };

function makeServer() {
  const server = new Server(
    { name: "conformance-upstream", version: "1.0.0" },
    {
      capabilities: {
        tools: {},
        logging: {},
        prompts: { listChanged: true },
        resources: { subscribe: true, listChanged: true },
        completions: {},
      },
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: dynamic.tool ? [...TOOLS, DYNAMIC_TOOL] : TOOLS }));
  // CONFORMANCE_LIST_TTL_MS: caching hints (2026-07-28 `ttlMs`, public) on the prompt and
  // template lists, whatever revision was negotiated (a test of how Offload merges them).
  const ttl = process.env.CONFORMANCE_LIST_TTL_MS ? { ttlMs: Number(process.env.CONFORMANCE_LIST_TTL_MS), cacheScope: "public" } : {};
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: dynamic.prompt ? [...PROMPTS, DYNAMIC_PROMPT] : PROMPTS, ...ttl }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) =>
    getPrompt(request.params.name, request.params.arguments ?? {}),
  );
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({ resourceTemplates: TEMPLATES, ...ttl }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => ({ contents: readResource(request.params.uri) }));
  const watched = new Set();
  server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    watched.add(request.params.uri);
    // Tell the subscriber at once that it changed, so relaying updates can be tested.
    setTimeout(() => {
      if (watched.has(request.params.uri)) {
        server.notification({ method: "notifications/resources/updated", params: { uri: request.params.uri } }).catch(() => {});
      }
    }, 100);
    return {};
  });
  server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    watched.delete(request.params.uri);
    return {};
  });
  server.setRequestHandler(CompleteRequestSchema, async (request) => {
    const { ref, argument } = request.params;
    const words = ref.type === "ref/prompt" && argument.name === "arg1" ? ["paris", "park", "party"] : ["123", "456"];
    const values = words.filter((w) => w.startsWith(argument.value ?? ""));
    return { completion: { values, total: values.length, hasMore: false } };
  });
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const text = (t) => ({ type: "text", text: t });
    const resource = { type: "resource", resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "This is an embedded resource content." } };
    switch (request.params.name) {
      case "test_simple_text":
        return { content: [text("This is a simple text response for testing.")] };
      case "test_image_content":
        return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
      case "test_audio_content":
        return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
      case "test_embedded_resource":
        return { content: [resource] };
      case "test_multiple_content_types":
        return { content: [text("Multiple content types test:"), { type: "image", data: PNG, mimeType: "image/png" }, resource] };
      case "test_tool_with_logging": {
        for (const [i, message] of ["Tool execution started", "Tool processing data", "Tool execution completed"].entries()) {
          if (i > 0) await sleep(50);
          await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: message } });
        }
        return { content: [text("Tool with logging executed successfully")] };
      }
      case "test_tool_with_progress": {
        const token = request.params._meta?.progressToken;
        for (const [i, progress] of [0, 50, 100].entries()) {
          if (i > 0) await sleep(50);
          if (token !== undefined) {
            await extra.sendNotification({ method: "notifications/progress", params: { progressToken: token, progress, total: 100 } });
          }
        }
        return { content: [text("Tool with progress executed successfully")] };
      }
      case "test_trigger_tool_change":
        dynamic.tool = !dynamic.tool;
        await server.sendToolListChanged();
        return { content: [text(`test_dynamic_tool ${dynamic.tool ? "added" : "removed"}`)] };
      case "test_trigger_prompt_change":
        dynamic.prompt = !dynamic.prompt;
        await server.sendPromptListChanged();
        return { content: [text(`test_dynamic_prompt ${dynamic.prompt ? "added" : "removed"}`)] };
      case "test_logging_tool":
        await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: "logged while running" } });
        return { content: [text("logged")] };
      case "test_app_tool":
        return { content: [text("Hello")], structuredContent: { greeting: "Hello" } };
      case "test_dynamic_tool":
        return { content: [text("dynamic")] };
      case "test_error_handling":
        return { isError: true, content: [text("This tool intentionally returns an error for testing")] };
      case "test_missing_capability":
      case "test_sampling": {
        const answer = await extra.sendRequest(
          { method: "sampling/createMessage", params: { messages: [{ role: "user", content: { type: "text", text: request.params.arguments?.prompt ?? "" } }], maxTokens: 100 } },
          CreateMessageResultSchema,
        );
        return { content: [text(`LLM response: ${answer.content?.text ?? JSON.stringify(answer.content)}`)] };
      }
      case "test_streaming_elicitation":
      case "test_elicitation": {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              message: request.params.arguments?.message ?? "Please answer",
              requestedSchema: { type: "object", properties: { username: { type: "string" }, email: { type: "string" } }, required: ["username", "email"] },
            },
          },
          ElicitResultSchema,
        );
        return { content: [text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`)] };
      }
      case "json_schema_2020_12_tool":
        return { content: [text(`received ${JSON.stringify(request.params.arguments ?? {})}`)] };
      default:
        return { isError: true, content: [text(`unknown tool ${request.params.name}`)] };
    }
  });
  return server;
}

const httpAt = process.argv.indexOf("--http");
if (httpAt < 0) {
  await makeServer().connect(new StdioServerTransport());
} else {
  // Sessions (2025-11-25), so that sampling and elicitation can reach the client.
  const port = Number(process.argv[httpAt + 1]);
  const sessions = new Map();
  http
    .createServer(async (req, res) => {
      if (!req.url.startsWith("/mcp")) {
        res.writeHead(404).end();
        return;
      }
      const id = req.headers["mcp-session-id"];
      let transport = id && sessions.get(id);
      if (!transport) {
        if (id) {
          res.writeHead(404).end();
          return;
        }
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
        await makeServer().connect(transport);
      }
      await transport.handleRequest(req, res);
    })
    .listen(port, "127.0.0.1", () => console.error(`listening on ${port}`));
}
