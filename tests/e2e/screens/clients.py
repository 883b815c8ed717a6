"""The Clients screen: connecting a client and importing its servers."""

import json
import re

from harness import FIXTURE


def connect_and_import(run):
    """Clients: Connect on the fake home's Claude Desktop config adds exactly one entry, keeps the
    rest and a backup; Import copies its other server into Offload."""
    config, home, wd = run.config, run.home, run.wd
    claude = home / ".config" / "Claude" / "claude_desktop_config.json"
    claude.parent.mkdir(parents=True)
    original = ('{\n  "mcpServers": {\n    "tools": {"command": "%s", "args": ["--from-claude"]}\n'
                '  },\n  "globalShortcut": "Ctrl+Space"\n}\n' % FIXTURE)
    claude.write_text(original)
    wd.click("[data-testid=nav-clients]")
    wd.wait_text("[data-testid=client-claude-desktop]", "not connected")
    # What each mode costs a client's model with every request, from the real engine: the tool
    # lists as each mode answers them, and the mode in effect.
    direct = wd.wait_text("[data-testid=mode-cost-direct]", "tokens")
    meta = wd.text("[data-testid=mode-cost-meta]")
    cost = [int(re.search(r"≈ ([\d,]+) tokens", t).group(1).replace(",", "")) for t in (direct, meta)]
    assert cost[0] > 0 and 1000 < cost[1] < 5000, (direct, meta)
    assert "the rest found by search" in meta, meta
    assert "Clients that do not choose see the tools" in wd.text("[data-testid=mode-now]")
    print(f"mode costs shown: each tool listed {cost[0]} tokens, through call_tool {cost[1]}")
    wd.click("[data-testid=client-claude-desktop] [data-testid=client-connect]")
    # "connected" is also in "not connected": the state is done changing when Disconnect shows
    # and the buttons are enabled again.
    wd.find("[data-testid=client-claude-desktop] [data-testid=client-disconnect]")
    wd.wait_text("[data-testid=client-claude-desktop] [data-testid=client-note]", "Connected: restart")
    doc = json.loads(claude.read_text())
    ours = [n for n, e in doc["mcpServers"].items() if e.get("args") == ["mcp"]]
    assert ours == ["offload"] and doc["mcpServers"]["offload"]["command"].endswith("/offload"), doc
    assert doc["globalShortcut"] == "Ctrl+Space" and "tools" in doc["mcpServers"], doc
    copies = list(claude.parent.glob("claude_desktop_config.json.offload-backup-*"))
    assert len(copies) == 1 and copies[0].read_text() == original, copies
    wd.wait_enabled("[data-testid=client-claude-desktop] [data-testid=client-import]")
    wd.click("[data-testid=client-claude-desktop] [data-testid=client-import]")
    wd.wait_text("[data-testid=client-claude-desktop] [data-testid=client-note]", "Imported 1 server")
    assert json.loads(config.read_text())["mcpServers"]["tools"]["args"] == ["--from-claude"]
    wd.screenshot("clients.png")
    print("Claude Desktop connected (one entry, backup kept); its server imported")
