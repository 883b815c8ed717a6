import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockCommands } from "../lib/mock";
import Dropped from "./Dropped.svelte";
import * as f from "../lib/fixtures";

describe("Dropped files", () => {
  it("previews a file outside the roots and offers its folder read-only", async () => {
    let allowed = false;
    const added: unknown[] = [];
    mockCommands({
      file_info: () => ({ path: "/home/me/Downloads/x.csv", name: "x.csv", folder: "/home/me/Downloads", bytes: 12, root: allowed ? "/home/me/Downloads" : null, directory: false }),
      file_summary: () => f.summary({ head: "a,b" }),
      add_root: (args) => {
        added.push(args);
        allowed = true;
        return null;
      },
    });
    render(Dropped, { paths: ["/home/me/Downloads/x.csv"] });
    expect(await screen.findByTestId("preview-head")).toHaveTextContent("a,b");
    expect(screen.getByTestId("dropped-outside")).toHaveTextContent("outside the allowed directories");
    await userEvent.click(screen.getByTestId("allow-folder"));
    await waitFor(() => expect(screen.getByTestId("dropped-inside")).toBeInTheDocument());
    expect(added).toEqual([{ path: "/home/me/Downloads", writable: false }]);
    expect(screen.getByTestId("dropped-notice")).toHaveTextContent("read-only");

    // Now the model can reach it: its $file reference is one click away.
    const copied: string[] = [];
    Object.defineProperty(navigator, "clipboard", { value: { writeText: async (t: string) => void copied.push(t) }, configurable: true });
    await userEvent.click(screen.getByTestId("copy-dropped-ref"));
    expect(copied).toEqual(['{"$file":"/home/me/Downloads/x.csv"}']);
    expect(screen.getByTestId("dropped-notice")).toHaveTextContent("Copied");
  });

  it("offers a dropped folder as an allowed directory, read-only or writable", async () => {
    let allowed: string | null = null;
    const added: unknown[] = [];
    mockCommands({
      file_info: () => ({ path: "/home/me/reports", name: "reports", folder: "/home/me/reports", bytes: 0, root: allowed, directory: true }),
      add_root: (args) => {
        added.push(args);
        allowed = "/home/me/reports";
        return null;
      },
      file_summary: () => {
        throw new Error("a folder is not previewed");
      },
    });
    render(Dropped, { paths: ["/home/me/reports"] });
    expect(await screen.findByTestId("dropped-folder")).toHaveTextContent("not allowed yet");
    expect(screen.getByRole("heading")).toHaveTextContent("Dropped folder");
    expect(screen.queryByTestId("preview")).toBeNull();
    await userEvent.click(screen.getByTestId("allow-dropped-folder-writable"));
    await waitFor(() => expect(screen.getByTestId("dropped-inside")).toHaveTextContent("already use its files"));
    expect(added).toEqual([{ path: "/home/me/reports", writable: true }]);
    expect(screen.getByTestId("dropped-notice")).toHaveTextContent("read and write");
  });

  it("says which dropped file cannot be opened", async () => {
    mockCommands({
      file_info: () => {
        throw { code: "path_not_found", message: "cannot open '/gone': No such file" };
      },
    });
    render(Dropped, { paths: ["/gone"] });
    expect(await screen.findByText(/cannot open '\/gone'/)).toBeInTheDocument();
  });
});
