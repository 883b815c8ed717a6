import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockCommands } from "../lib/mock";
import Directories from "./Directories.svelte";
import * as f from "../lib/fixtures";
import type { RootView } from "../lib/types";

/** The URLs part of the screen, with no pattern allowed. */
const noUrls = () => ({ allow: [], maxBytes: 1 << 30, timeoutSecs: 120 });

describe("Directories", () => {
  it("adds the folder chosen in the picker", async () => {
    let roots: RootView[] = [f.root({ path: "/builtin", configured: false })];
    const added: unknown[] = [];
    mockCommands(
      {
        roots: () => roots,
        urls: noUrls,
        add_root: (args) => {
          added.push(args);
          roots = [f.root({ path: "/builtin", default: true }), f.root({ path: "/home/me/datasets", default: false, files: 0, bytes: 0 })];
          return null;
        },
      },
      { plugins: { "plugin:dialog|open": () => "/home/me/datasets" } },
    );
    render(Directories);
    expect(await screen.findByText("Built in: used while no folder is configured.")).toBeInTheDocument();
    await userEvent.click(screen.getByTestId("add-root"));
    await waitFor(() => expect(screen.getAllByTestId("root-row")).toHaveLength(2));
    expect(added).toEqual([{ path: "/home/me/datasets", writable: true }]);
    expect(screen.getByText("/home/me/datasets")).toBeInTheDocument();
  });

  it("does nothing when the picker is cancelled, and shows refusals", async () => {
    let picked: string | null = null;
    mockCommands(
      {
        roots: () => [f.root()],
        urls: noUrls,
        add_root: () => {
          throw { code: "invalid_arguments", message: "'/data' is already allowed" };
        },
      },
      { plugins: { "plugin:dialog|open": () => picked } },
    );
    render(Directories);
    await userEvent.click(await screen.findByTestId("add-root"));
    expect(screen.queryByTestId("roots-error")).toBeNull();
    picked = "/data";
    await userEvent.click(screen.getByTestId("add-root"));
    expect(await screen.findByTestId("roots-error")).toHaveTextContent("already allowed");
  });

  it("shows stored files, problems, and removes after confirmation", async () => {
    let roots = [f.root(), f.root({ path: "/gone", default: false, problem: "cannot be used: No such file", resolved: null, files: 0, bytes: 0 })];
    mockCommands({
      roots: () => roots,
      urls: noUrls,
      remove_root: ({ path }) => {
        roots = roots.filter((r) => r.path !== path);
        return null;
      },
    });
    render(Directories);
    expect((await screen.findAllByTestId("root-stored"))[0]).toHaveTextContent("3 stored files · 2.0 KB");
    expect(screen.getByText("cannot be used: No such file")).toBeInTheDocument();
    await userEvent.click(screen.getByLabelText("Remove /gone"));
    expect(screen.getByTestId("keep")).toHaveFocus();
    // Escape keeps it, and the focus is back on Remove….
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByRole("button", { name: "Remove" })).toBeNull();
    expect(screen.getByLabelText("Remove /gone")).toHaveFocus();
    await userEvent.click(screen.getByLabelText("Remove /gone"));
    await userEvent.click(screen.getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(screen.getAllByTestId("root-row")).toHaveLength(1));
    // The row is gone: the focus goes to what adds another.
    await waitFor(() => expect(screen.getByTestId("add-root")).toHaveFocus());
  });

  it("adds a bucket with its keys, and keeps the form open with the reason when the check fails", async () => {
    let roots: RootView[] = [f.root()];
    const sent: unknown[] = [];
    let refuse = true;
    mockCommands({
      roots: () => roots,
      urls: noUrls,
      add_bucket_root: ({ form }) => {
        sent.push(form);
        if (refuse) throw { code: "path_unusable", message: "s3://team/agents did not answer within 10 s; check the endpoint" };
        roots = [...roots, f.root({ path: "s3://team/agents", resolved: "s3://team/agents", default: false, writable: true, files: 0, bytes: 0 })];
        return null;
      },
    });
    render(Directories);
    await userEvent.click(await screen.findByTestId("add-bucket"));
    await userEvent.type(screen.getByTestId("bucket-url"), "s3://team/agents");
    await userEvent.type(screen.getByTestId("bucket-endpoint"), "http://127.0.0.1:9000");
    await userEvent.type(screen.getByTestId("bucket-region"), "eu-west-1");
    await userEvent.type(screen.getByTestId("bucket-key"), "AKIA1");
    await userEvent.type(screen.getByTestId("bucket-secret"), "s3cret");
    expect(screen.getByTestId("bucket-secret")).toHaveAttribute("type", "password");
    await userEvent.click(screen.getByLabelText("Offload may store answers there"));
    await userEvent.click(screen.getByTestId("bucket-save"));
    expect(await screen.findByTestId("roots-error")).toHaveTextContent("did not answer within 10 s");
    expect(screen.getByTestId("bucket-form")).toBeInTheDocument();
    refuse = false;
    await userEvent.click(screen.getByTestId("bucket-save"));
    await waitFor(() => expect(screen.queryByTestId("bucket-form")).toBeNull());
    expect(await screen.findByText("s3://team/agents")).toBeInTheDocument();
    expect(sent[1]).toEqual({
      url: "s3://team/agents",
      endpoint: "http://127.0.0.1:9000",
      region: "eu-west-1",
      accessKeyId: "AKIA1",
      secretAccessKey: "s3cret",
      writable: true,
    });
  });

  it("asks for what each store calls its credentials: GCS a service-account key, Azure an account and key", async () => {
    const sent: any[] = [];
    mockCommands({
      roots: () => [f.root()],
      urls: noUrls,
      add_bucket_root: ({ form }) => {
        sent.push(form);
        return null;
      },
    });
    render(Directories);
    await userEvent.click(await screen.findByTestId("add-bucket"));
    expect(screen.getByLabelText("Access key ID")).toBeInTheDocument();
    await userEvent.type(screen.getByTestId("bucket-url"), "gs://lake/team");
    expect(screen.queryByTestId("bucket-region")).toBeNull();
    expect(screen.queryByTestId("bucket-key")).toBeNull();
    const key = screen.getByLabelText("Service account key (JSON)");
    expect(key).toHaveAttribute("type", "password");
    await userEvent.click(key);
    await userEvent.paste('{"type": "service_account"}');
    await userEvent.click(screen.getByTestId("bucket-save"));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toMatchObject({ url: "gs://lake/team", secretAccessKey: '{"type": "service_account"}', accessKeyId: "" });

    await userEvent.click(await screen.findByTestId("add-bucket"));
    await userEvent.type(screen.getByTestId("bucket-url"), "az://box/team");
    expect(screen.getByLabelText("Storage account")).toBeInTheDocument();
    expect(screen.getByLabelText("Account key")).toHaveAttribute("type", "password");
    expect(screen.queryByTestId("bucket-region")).toBeNull();
  });

  it("allows URL patterns, says what each reaches, and removes them after confirmation", async () => {
    let allow: { pattern: string; problem: string | null; namesHost: boolean }[] = [];
    const asked: unknown[] = [];
    mockCommands({
      roots: () => [f.root()],
      urls: () => ({ allow, maxBytes: 1024 * 1024 * 1024, timeoutSecs: 120 }),
      allow_url: ({ pattern }) => {
        asked.push(pattern);
        if (!pattern.includes("://")) throw { code: "invalid_arguments", message: `'${pattern}' is not a URL pattern: it needs a scheme` };
        allow = [...allow, { pattern, problem: null, namesHost: !pattern.includes("*.") }];
        return null;
      },
      remove_url: ({ pattern }) => {
        allow = allow.filter((u) => u.pattern !== pattern);
        return null;
      },
    });
    render(Directories);
    expect(await screen.findByTestId("no-urls")).toHaveTextContent("cannot fetch any");
    expect(screen.getByTestId("url-limits")).toHaveTextContent("at most 1.0 GB and 120 s");
    expect(screen.getByTestId("url-allow")).toBeDisabled();

    await userEvent.type(screen.getByTestId("url-pattern"), "data.example.com");
    await userEvent.click(screen.getByTestId("url-allow"));
    expect(await screen.findByTestId("roots-error")).toHaveTextContent("needs a scheme");
    expect(screen.getByTestId("url-pattern")).toHaveValue("data.example.com");

    await userEvent.clear(screen.getByTestId("url-pattern"));
    await userEvent.type(screen.getByTestId("url-pattern"), "https://*.cdn.example.com/*{Enter}");
    await waitFor(() => expect(screen.getAllByTestId("url-row")).toHaveLength(1));
    expect(screen.getByTestId("url-pattern")).toHaveValue("");
    expect(screen.getByTestId("url-row")).toHaveTextContent("public addresses only");
    await userEvent.type(screen.getByTestId("url-pattern"), "http://nas.local:8080/*{Enter}");
    await waitFor(() => expect(screen.getAllByTestId("url-row")).toHaveLength(2));
    expect(screen.getAllByTestId("url-row")[1]).toHaveTextContent("this host, wherever it is");
    expect(asked).toEqual(["data.example.com", "https://*.cdn.example.com/*", "http://nas.local:8080/*"]);

    await userEvent.click(screen.getByLabelText("Remove https://*.cdn.example.com/*"));
    await userEvent.click(screen.getByRole("button", { name: "Remove" }));
    await waitFor(() => expect(screen.getAllByTestId("url-row")).toHaveLength(1));
    expect(screen.getByTestId("url-row")).toHaveTextContent("nas.local");
  });

  it("counts stored and other files, and sets a retention rule after saying what it deletes", async () => {
    const calls: any[] = [];
    let rule: any = null;
    mockCommands({
      roots: () => [f.root({ files: 12, bytes: 3_000_000, others: 2, retention: rule }), f.root({ path: "/inputs", writable: false, default: false, files: 0, bytes: 0, others: 40 })],
      urls: () => ({ allow: [], maxBytes: 1 << 30, timeoutSecs: 120 }),
      retention_preview: (args) => {
        calls.push(args);
        return { root: "/data", files: args.retention.days === 30 ? 4 : 0, bytes: args.retention.days === 30 ? 1_048_576 : 0 };
      },
      set_root_retention: (args) => {
        calls.push({ set: args });
        rule = args.retention;
        return rule ? [{ root: "/data", files: 4, bytes: 1_048_576 }] : [];
      },
    });
    render(Directories);
    const others = await screen.findAllByTestId("root-others");
    expect(others.map((o) => o.textContent)).toEqual(["and 2 other files", "and 40 other files"]);
    // A read-only folder gets no rule: Offload deletes nothing there.
    expect(screen.getAllByTestId("root-retention")).toHaveLength(1);
    expect(screen.getByTestId("root-retention")).toHaveTextContent("Kept until you delete them");

    await userEvent.click(screen.getByTestId("root-retention-edit"));
    expect(screen.getByTestId("retention-days")).toHaveFocus();
    await userEvent.keyboard("30");
    await waitFor(() => expect(screen.getByTestId("retention-preview")).toHaveTextContent("Saving deletes 4 stored responses (1.0 MB) now"));
    expect(calls.at(-1)).toEqual({ path: "/data", retention: { days: 30, maxGb: null } });
    await userEvent.click(screen.getByTestId("retention-save"));
    expect(await screen.findByTestId("roots-notice")).toHaveTextContent("Rule saved for /data: deleted 4 stored responses (1.0 MB).");
    expect(calls.at(-1)).toEqual({ set: { path: "/data", retention: { days: 30, maxGb: null } } });
    await waitFor(() => expect(screen.getByTestId("root-retention")).toHaveTextContent("Deleted after 30 days"));

    // Escape leaves the form; Turn off removes the rule.
    await userEvent.click(screen.getByTestId("root-retention-edit"));
    await userEvent.keyboard("{Escape}");
    expect(screen.queryByTestId("retention-form")).toBeNull();
    expect(screen.getByTestId("root-retention-edit")).toHaveFocus();
    await userEvent.click(screen.getByTestId("root-retention-edit"));
    await userEvent.click(screen.getByTestId("retention-off"));
    expect(await screen.findByTestId("roots-notice")).toHaveTextContent("Rule turned off for /data.");
    expect(calls.at(-1)).toEqual({ set: { path: "/data", retention: null } });
  });
});
