import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockIPC } from "@tauri-apps/api/mocks";
import Dropped from "./Dropped.svelte";
import * as f from "../lib/fixtures";

describe("Dropped files", () => {
  it("previews a file outside the roots and offers its folder read-only", async () => {
    let allowed = false;
    const added: unknown[] = [];
    mockIPC((cmd, args: any) => {
      if (cmd === "file_info")
        return { path: "/home/me/Downloads/x.csv", name: "x.csv", folder: "/home/me/Downloads", bytes: 12, root: allowed ? "/home/me/Downloads" : null };
      if (cmd === "file_summary") return f.summary({ head: "a,b" });
      if (cmd === "add_root") {
        added.push(args);
        allowed = true;
      }
    });
    render(Dropped, { paths: ["/home/me/Downloads/x.csv"] });
    expect(await screen.findByTestId("preview-head")).toHaveTextContent("a,b");
    expect(screen.getByTestId("dropped-outside")).toHaveTextContent("outside the allowed directories");
    await userEvent.click(screen.getByTestId("allow-folder"));
    await waitFor(() => expect(screen.getByTestId("dropped-inside")).toBeInTheDocument());
    expect(added).toEqual([{ path: "/home/me/Downloads", writable: false }]);
    expect(screen.getByTestId("dropped-notice")).toHaveTextContent("read-only");
  });

  it("says which dropped file cannot be opened", async () => {
    mockIPC((cmd) => {
      if (cmd === "file_info") throw { code: "path_not_found", message: "cannot open '/gone': No such file" };
    });
    render(Dropped, { paths: ["/gone"] });
    expect(await screen.findByText(/cannot open '\/gone'/)).toBeInTheDocument();
  });
});
