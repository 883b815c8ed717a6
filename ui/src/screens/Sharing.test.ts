import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockCommands } from "../lib/mock";
import Sharing from "./Sharing.svelte";
import type { SharingView } from "../lib/types";

describe("Sharing", () => {
  it("turns serving on, makes a token shown once with each client's entry, and revokes it", async () => {
    let view: SharingView = { serving: { listen: null, url: null, error: null }, tokens: [], issuer: null };
    const calls: [string, unknown][] = [];
    mockCommands(
      {
        sharing: () => view,
        set_http_listen: ({ listen }) => {
          view = { ...view, serving: { listen: listen ?? null, url: listen ? `http://${listen}/mcp` : null, error: null } };
          return view;
        },
        create_token: ({ name, scopes }) => {
          view = { ...view, tokens: [{ name, scopes, created: "2026-11-24T10:00:00Z" }] };
          return {
            name,
            token: "ofl_secret123",
            url: "http://127.0.0.1:8765/mcp",
            snippets: [
              { client: "Claude Code", place: "a terminal", text: "claude mcp add --transport http offload http://127.0.0.1:8765/mcp --header \"Authorization: Bearer ofl_secret123\"" },
              { client: "VS Code", place: ".vscode/mcp.json", text: "{\"servers\": {}}" },
            ],
          };
        },
        revoke_token: () => {
          view = { ...view, tokens: [] };
          return null;
        },
      },
      { calls },
    );
    render(Sharing);
    expect(await screen.findByTestId("serve-off")).toHaveTextContent("Not serving");
    expect(screen.getByTestId("no-tokens")).toBeInTheDocument();

    await userEvent.click(screen.getByTestId("serve-http"));
    expect(await screen.findByTestId("serve-url")).toHaveTextContent("http://127.0.0.1:8765/mcp");
    expect(calls).toContainEqual(["set_http_listen", { listen: "127.0.0.1:8765" }]);

    await userEvent.type(screen.getByTestId("token-name"), "ci-agent");
    await userEvent.click(screen.getByTestId("token-scope-store"));
    await userEvent.click(screen.getByTestId("token-create"));
    expect(calls).toContainEqual(["create_token", { name: "ci-agent", scopes: ["read", "call", "store"] }]);
    expect(await screen.findByTestId("token-value")).toHaveTextContent("ofl_secret123");
    const snippets = screen.getAllByTestId("token-snippet");
    expect(snippets[0]).toHaveTextContent("claude mcp add --transport http");
    expect(screen.getByTestId("tokens")).toHaveTextContent("ci-agent");
    expect(screen.getByTestId("tokens")).not.toHaveTextContent("ofl_secret123");
    // The focus: on Copy token while the banner shows, then on the name of a next token.
    expect(screen.getByTestId("token-copy")).toHaveFocus();
    await userEvent.click(screen.getByTestId("token-done"));
    expect(screen.queryByTestId("token-value")).toBeNull();
    expect(screen.getByTestId("token-name")).toHaveFocus();

    await userEvent.click(screen.getByTestId("token-revoke-ci-agent"));
    expect(screen.getByTestId("token-revoke-keep")).toHaveFocus();
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByTestId("token-revoke-yes")).toBeNull();
    expect(screen.getByTestId("token-revoke-ci-agent")).toHaveFocus();
    await userEvent.click(screen.getByTestId("token-revoke-ci-agent"));
    await userEvent.click(screen.getByTestId("token-revoke-yes"));
    await waitFor(() => expect(screen.getByTestId("no-tokens")).toBeInTheDocument());
    await waitFor(() => expect(screen.getByTestId("token-name")).toHaveFocus());
    expect(calls).toContainEqual(["revoke_token", { name: "ci-agent" }]);
  });

  it("says why an address cannot be served", async () => {
    mockCommands({
      sharing: () => ({
        serving: { listen: "10.9.9.9:80", url: null, error: "cannot listen on 10.9.9.9:80: Cannot assign requested address" },
        tokens: [],
        issuer: null,
      }),
    });
    render(Sharing);
    expect(await screen.findByTestId("serve-problem")).toHaveTextContent("cannot listen on 10.9.9.9:80");
  });
});
