//! Connecting, disconnecting and importing on a fake home directory with real client files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use offload_testkit::{TestContext, target_bin};
use serde_json::{Value, json};

use super::*;
use crate::config::NoKeychain;
use crate::control::{connect, disconnect, import_servers};
use crate::{Engine, EngineOptions, ErrorCode};

fn machine(t: &TestContext) -> Machine {
    Machine {
        home: t.home.clone(),
        config_dir: t.home.join(".config"),
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn backups(path: &Path) -> Vec<PathBuf> {
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    let mut found: Vec<PathBuf> = std::fs::read_dir(path.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&format!("{name}.offload-backup-"))
        })
        .collect();
    found.sort();
    found
}

const CLAUDE: &str = "{\n    \"mcpServers\": {\n        \"sqlite\": {\n            \"command\": \"uvx\",\n            \"args\": [\"mcp-server-sqlite\"]\n        }\n    },\n    \"globalShortcut\": \"Ctrl+Space\"\n}\n";

#[test]
fn connect_adds_exactly_one_entry_keeps_the_rest_and_backs_up() {
    let t = TestContext::new();
    let m = machine(&t);
    let file = t.home.join(".config/Claude/claude_desktop_config.json");
    write(&file, CLAUDE);
    let before = views(&m)
        .into_iter()
        .find(|c| c.id == "claude-desktop")
        .unwrap();
    assert!(before.present && !before.connected);
    assert_eq!(before.servers, ["sqlite"]);

    let program = Path::new("/opt/offload/offload");
    let change = connect(&m, "claude-desktop", program, None).unwrap();
    assert!(change.client.connected);
    let backup = PathBuf::from(change.backup.unwrap());
    assert_eq!(
        std::fs::read_to_string(&backup).unwrap(),
        CLAUDE,
        "the backup is the old file"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.starts_with("{\n    \"mcpServers\": {\n        \"sqlite\": {"),
        "formatting kept:\n{text}"
    );
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["globalShortcut"], "Ctrl+Space");
    assert_eq!(
        v["mcpServers"]["offload"],
        json!({"command": "/opt/offload/offload", "args": ["mcp"]})
    );
    assert_eq!(v["mcpServers"].as_object().unwrap().len(), 2);

    // Again, with the binary moved: the one entry is replaced, not duplicated.
    connect(&m, "claude-desktop", Path::new("/usr/bin/offload"), None).unwrap();
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(v["mcpServers"].as_object().unwrap().len(), 2);
    assert_eq!(v["mcpServers"]["offload"]["command"], "/usr/bin/offload");
    assert_eq!(backups(&file).len(), 2);

    let change = disconnect(&m, "claude-desktop").unwrap();
    assert!(!change.client.connected);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(
        v["mcpServers"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["sqlite"]
    );
}

#[test]
fn a_client_without_a_file_gets_one_and_unknown_or_broken_ones_are_refused() {
    let t = TestContext::new();
    let m = machine(&t);
    let cursor = t.home.join(".cursor/mcp.json");
    assert!(!views(&m).iter().find(|c| c.id == "cursor").unwrap().present);
    let change = connect(&m, "cursor", Path::new("/o/offload"), None).unwrap();
    assert_eq!(change.backup, None);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&cursor).unwrap()).unwrap();
    assert_eq!(
        v,
        json!({"mcpServers": {"offload": {"command": "/o/offload", "args": ["mcp"]}}})
    );

    let broken = "{\"mcpServers\": {\"a\": ";
    let gemini = t.home.join(".gemini/settings.json");
    write(&gemini, broken);
    let view = views(&m).into_iter().find(|c| c.id == "gemini").unwrap();
    assert!(view.error.unwrap().contains("left alone"));
    let e = connect(&m, "gemini", Path::new("/o/offload"), None).unwrap_err();
    assert_eq!(e.code, ErrorCode::ConfigInvalid);
    assert_eq!(
        std::fs::read_to_string(&gemini).unwrap(),
        broken,
        "never written"
    );
    assert!(backups(&gemini).is_empty());
    assert_eq!(
        connect(&m, "nope", Path::new("/o"), None).unwrap_err().code,
        ErrorCode::InvalidArguments
    );
}

#[test]
fn zed_codex_vscode_and_opencode_are_written_their_own_way() {
    let t = TestContext::new();
    let m = machine(&t);
    let zed = t.home.join(".config/zed/settings.json");
    write(
        &zed,
        "// Zed settings\n{\n  \"ui_font_size\": 16, // big\n}\n",
    );
    let codex = t.home.join(".codex/config.toml");
    write(&codex, "model = \"o3\" # favourite\n");
    let program = Path::new("/o/offload");
    for id in ["zed", "codex", "vscode", "opencode"] {
        assert!(
            connect(&m, id, program, None).unwrap().client.connected,
            "{id}"
        );
    }
    let z = std::fs::read_to_string(&zed).unwrap();
    assert!(
        z.contains("// Zed settings") && z.contains("// big") && z.contains("\"context_servers\""),
        "{z}"
    );
    let c = std::fs::read_to_string(&codex).unwrap();
    assert!(c.starts_with("model = \"o3\" # favourite\n"), "{c}");
    assert!(c.contains("[mcp_servers.offload]"), "{c}");
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(t.home.join(".config/Code/User/mcp.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        v["servers"]["offload"],
        json!({"type": "stdio", "command": "/o/offload", "args": ["mcp"]})
    );
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(t.home.join(".config/opencode/opencode.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(
        v["mcp"]["offload"],
        json!({"type": "local", "command": ["/o/offload", "mcp"]})
    );
}

#[cfg(unix)]
#[test]
fn a_symlinked_file_is_written_through_the_link() {
    let t = TestContext::new();
    let m = machine(&t);
    let dotfiles = t.tmp.path().join("dotfiles/claude.json");
    write(&dotfiles, "{}");
    std::os::unix::fs::symlink(&dotfiles, t.home.join(".claude.json")).unwrap();
    connect(&m, "claude-code", Path::new("/o/offload"), None).unwrap();
    assert!(
        std::fs::symlink_metadata(t.home.join(".claude.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&dotfiles).unwrap()).unwrap();
    assert_eq!(v["mcpServers"]["offload"]["type"], "stdio");
}

#[tokio::test]
async fn import_copies_new_servers_skips_duplicates_and_can_move_them() {
    let t = TestContext::new();
    let fixture = target_bin("offload-fixture").display().to_string();
    t.write_servers(json!({"mine": {"command": fixture, "args": ["--a"]}}));
    let engine = Arc::new(
        Engine::load(EngineOptions::under(
            &t.home,
            t.config_path.clone(),
            Arc::new(NoKeychain),
        ))
        .unwrap()
        .0,
    );
    let m = machine(&t);
    let cursor = t.home.join(".cursor/mcp.json");
    let text = json!({"mcpServers": {
        "mine": {"command": "other"},
        "same-as-mine": {"command": fixture, "args": ["--a"]},
        "github": {"command": fixture, "args": ["--gh"], "env": {"GITHUB_TOKEN": "ghp_x"}},
        "remote": {"url": "https://example.invalid/mcp"},
        "offload": {"command": "/o/offload", "args": ["mcp"]},
        "odd": {"command": 5}
    }})
    .to_string();
    write(&cursor, &text);

    let report = import_servers(&engine, &m, "cursor", true).await.unwrap();
    let outcome: Vec<(&str, Option<&str>)> = report
        .servers
        .iter()
        .map(|s| (s.name.as_str(), s.skipped.as_deref()))
        .collect();
    assert_eq!(
        outcome[0],
        ("mine", Some("Offload has a server of that name"))
    );
    assert_eq!(
        outcome[1],
        (
            "same-as-mine",
            Some("Offload runs it already as 'mine'; removed from the client")
        )
    );
    assert_eq!(outcome[2], ("github", None));
    assert_eq!(outcome[3], ("remote", None));
    assert_eq!(outcome[4].0, "odd");
    assert!(outcome[4].1.unwrap().contains("not one Offload reads"));
    let names: Vec<String> = engine
        .config()
        .mcp_servers
        .iter()
        .map(|(n, _)| n.clone())
        .collect();
    assert_eq!(names, ["mine", "github", "remote"]);

    // Moved: gone from the client, which keeps the rest and Offload's own entry.
    assert_eq!(
        std::fs::read_to_string(report.backup.unwrap()).unwrap(),
        text
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&cursor).unwrap()).unwrap();
    let left: Vec<&String> = v["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(
        left,
        ["mine", "offload", "odd"],
        "what Offload runs leaves the client"
    );

    // The imported token is offered for the keychain in the Servers screen.
    let github = crate::control::servers(&engine)
        .into_iter()
        .find(|s| s.name == "github")
        .unwrap();
    assert_eq!(github.plain_secrets[0].key, "GITHUB_TOKEN");

    // Importing again finds nothing new.
    let again = import_servers(&engine, &m, "cursor", false).await.unwrap();
    assert!(again.servers.iter().all(|s| s.skipped.is_some()));
    assert_eq!(again.backup, None);

    // Imported without removing, then again with removing: the copies leave the client, so
    // the model does not see their tools twice.
    let other =
        json!({"mcpServers": {"extra": {"command": fixture, "args": ["--extra"]}}}).to_string();
    write(&cursor, &other);
    let first = import_servers(&engine, &m, "cursor", false).await.unwrap();
    assert_eq!(first.servers[0].skipped, None);
    let moved = import_servers(&engine, &m, "cursor", true).await.unwrap();
    assert!(
        moved.servers[0]
            .skipped
            .as_deref()
            .unwrap()
            .contains("removed from the client")
    );
    assert!(moved.backup.is_some());
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&cursor).unwrap()).unwrap();
    assert!(v["mcpServers"].as_object().unwrap().is_empty(), "{v}");
    engine.shutdown().await;
}

#[test]
fn connect_writes_the_chosen_exposure_and_snippets_match_each_clients_format() {
    let t = TestContext::new();
    let m = machine(&t);
    let change = connect(
        &m,
        "cursor",
        Path::new("/o/offload"),
        Some(crate::gateway::Expose::Direct),
    )
    .unwrap();
    assert!(change.client.connected);
    let text = std::fs::read_to_string(m.path(crate::clients::known("cursor").unwrap())).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["mcpServers"]["offload"]["args"],
        serde_json::json!(["mcp", "--expose", "direct"])
    );
    let s = crate::control::snippet("vscode", Path::new("/o/offload"), None).unwrap();
    let v: serde_json::Value = serde_json::from_str(&s.text).unwrap();
    assert_eq!(v["servers"]["offload"]["command"], "/o/offload");
    let s = crate::control::snippet("codex", Path::new("/o/offload"), None).unwrap();
    assert!(s.text.contains("[mcp_servers.offload]"), "{}", s.text);
    let s = crate::control::snippet(
        "claude-code",
        Path::new("/o/offload"),
        Some(crate::gateway::Expose::Meta),
    )
    .unwrap();
    assert_eq!(
        s.command.as_deref(),
        Some("claude mcp add offload -- /o/offload mcp --expose meta")
    );
}
