"""The Clients screen: connecting a client and importing its servers."""

import json

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
    wd.click("[data-testid=client-claude-desktop] [data-testid=client-connect]")
    wd.wait_text("[data-testid=client-claude-desktop] [data-testid=client-state]", "connected")
    doc = json.loads(claude.read_text())
    ours = [n for n, e in doc["mcpServers"].items() if e.get("args") == ["mcp"]]
    assert ours == ["offload"] and doc["mcpServers"]["offload"]["command"].endswith("/offload"), doc
    assert doc["globalShortcut"] == "Ctrl+Space" and "tools" in doc["mcpServers"], doc
    copies = list(claude.parent.glob("claude_desktop_config.json.offload-backup-*"))
    assert len(copies) == 1 and copies[0].read_text() == original, copies
    wd.click("[data-testid=client-claude-desktop] [data-testid=client-import]")
    wd.wait_text("[data-testid=client-claude-desktop] [data-testid=client-note]", "Imported 1 server")
    assert json.loads(config.read_text())["mcpServers"]["tools"]["args"] == ["--from-claude"]
    wd.screenshot("clients.png")
    print("Claude Desktop connected (one entry, backup kept); its server imported")
