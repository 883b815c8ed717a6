import { describe, expect, it } from "vitest";
import { parseEntry } from "./entry";

describe("parseEntry", () => {
  it("reads the shapes READMEs and clients use", () => {
    const wrapped = parseEntry(`{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"], "env": {"KEY": "v"}}}}`);
    expect(wrapped).toMatchObject({ name: "everything", transport: "stdio", command: "npx", args: ["-y", "@modelcontextprotocol/server-everything"], env: { KEY: "v" } });
    const fragment = parseEntry(`"github": {"command": "docker", "args": ["run", "-i", "ghcr.io/github/github-mcp-server"]},`);
    expect(fragment).toMatchObject({ name: "github", command: "docker" });
    const alone = parseEntry(`{"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer x"}}`);
    expect(alone).toMatchObject({ name: null, transport: "http", url: "https://mcp.example.com/mcp", headers: { Authorization: "Bearer x" } });
    expect(parseEntry(`{"servers": {"remote": {"type": "http", "serverUrl": "https://a.example/mcp"}}}`)).toMatchObject({ name: "remote", url: "https://a.example/mcp" });
  });

  it("says what is wrong with what was pasted", () => {
    expect(() => parseEntry("")).toThrow("Paste a server entry first");
    expect(() => parseEntry("npx -y something")).toThrow("not JSON");
    expect(() => parseEntry(`{"name": {"foo": 1}}`)).toThrow("neither a \"command\"");
    expect(() => parseEntry(`{"command": "x", "args": "-y a"}`)).toThrow("list of strings");
    expect(() => parseEntry(`{"command": "x", "env": ["A=1"]}`)).toThrow("\"env\" is not an object");
    expect(() => parseEntry(`[1, 2]`)).toThrow("JSON object");
  });
});
