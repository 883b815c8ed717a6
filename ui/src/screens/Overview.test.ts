import { describe, expect, it } from "vitest";
import { render, screen, waitFor, within } from "@testing-library/svelte";
import userEvent from "@testing-library/user-event";
import { mockCommands } from "../lib/mock";
import Overview from "./Overview.svelte";
import * as f from "../lib/fixtures";

describe("Overview", () => {
  it("shows the figures and says how to connect when no client is connected", async () => {
    mockCommands({ overview: () => f.overview(), autostart: () => false });
    render(Overview);
    expect(await screen.findByTestId("no-clients")).toHaveTextContent('["mcp"]');
    expect(screen.getByTestId("card-calls")).toHaveTextContent("12");
    expect(screen.getByTestId("card-calls")).toHaveTextContent("1 error");
    expect(screen.getByTestId("card-kept")).toHaveTextContent("5.0 MB");
    expect(screen.getByTestId("card-kept")).toHaveTextContent("300 MB in all recorded calls");
  });

  it("lists connected clients", async () => {
    mockCommands({
      overview: () =>
        f.overview({
          status: f.status({ clients: 1 }),
          clients: [{ id: 1, client: "claude-ai", version: "0.9", since: new Date().toISOString() }],
        }),
      autostart: () => true,
    });
    render(Overview);
    expect(await screen.findByTestId("clients")).toHaveTextContent("claude-ai");
    expect(screen.getByTestId("card-clients")).toHaveTextContent("1");
    expect(await screen.findByTestId("autostart")).toBeChecked();
  });

  it("turns desktop notifications on and off, off by default, and shows a refusal", async () => {
    let on = false;
    const asked: boolean[] = [];
    mockCommands({
      overview: () => f.overview({ status: f.status({ notifications: on }) }),
      autostart: () => false,
      set_notifications: ({ enabled }) => {
        asked.push(enabled);
        if (asked.length === 3) throw { code: "config_invalid", message: "config.json does not parse" };
        on = enabled;
        return null;
      },
    });
    const { rerender } = render(Overview, { revision: 0 });
    const box = await screen.findByTestId("notifications");
    expect(box).not.toBeChecked();
    await userEvent.click(box);
    expect(box).toBeChecked();
    expect(asked).toEqual([true]);
    // The status (a reload) agrees.
    await rerender({ revision: 1 });
    await waitFor(() => expect(screen.getByTestId("notifications")).toBeChecked());
    await userEvent.click(screen.getByTestId("notifications"));
    expect(asked).toEqual([true, false]);
    await rerender({ revision: 2 });
    await waitFor(() => expect(screen.getByTestId("notifications")).not.toBeChecked());
    // Refused: the box shows what is in effect, and why.
    await userEvent.click(screen.getByTestId("notifications"));
    expect(await screen.findByRole("alert")).toHaveTextContent("does not parse");
    expect(screen.getByTestId("notifications")).not.toBeChecked();
  });

  it("shows an error where the overview failed", async () => {
    mockCommands({
      overview: () => {
        throw { code: "internal", message: "engine gone" };
      },
      autostart: () => false,
    });
    render(Overview);
    expect(await screen.findByRole("alert")).toHaveTextContent("engine gone");
  });

  it("charts the activity of a day or a week, in total or by server or client, and lists the slowest calls", async () => {
    const asked: string[] = [];
    mockCommands({
      overview: ({ span }) => {
        asked.push(span ?? "day");
        return f.overview();
      },
      autostart: () => false,
    });
    render(Overview);
    expect(await screen.findByTestId("activity-total")).toHaveTextContent("Calls: 10 in the last day");
    expect(screen.getByRole("img", { name: "Calls in the last day: 10" })).toBeInTheDocument();
    const table = screen.getByTestId("activity-table");
    expect(within(table).getAllByRole("row")).toHaveLength(25);
    expect(within(table).getAllByRole("row")[24]).toHaveTextContent("6");

    await userEvent.selectOptions(screen.getByTestId("activity-metric"), "bytesKept");
    expect(screen.getByTestId("activity-total")).toHaveTextContent("Kept out of context: 1.0 MB in the last day");
    await userEvent.click(screen.getByRole("button", { name: "By server" }));
    expect(screen.getByRole("button", { name: "By server" })).toHaveAttribute("aria-pressed", "true");
    // Only servers that kept something are drawn.
    const heads = within(screen.getByTestId("activity-table")).getAllByRole("columnheader");
    expect(heads.map((h) => h.textContent)).toEqual(["Time", "git"]);
    await userEvent.selectOptions(screen.getByTestId("activity-metric"), "calls");
    expect(within(screen.getByTestId("activity-table")).getAllByRole("columnheader")).toHaveLength(3);

    const slowest = screen.getByTestId("slowest");
    expect(within(slowest).getAllByRole("row")[1]).toHaveTextContent(/git\/git_log.*claude-code.*12 s.*ok/);
    expect(within(slowest).getAllByRole("row")[2]).toHaveTextContent("0.85 s");

    await userEvent.click(screen.getByRole("button", { name: "Week" }));
    await waitFor(() => expect(asked).toEqual(["day", "week"]));
  });
});
