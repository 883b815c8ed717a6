//! Confinement as a new user meets it: a hand-written configuration stays confined with the
//! network off, and a start refused by confinement says what was refused and how to allow it.

use serde_json::json;

/// A new user pastes a server into a hand-written configuration: `offload doctor` says it is
/// confined with the network off, before Offload first ran and after (the one-time upgrade of
/// servers from before confinement is for files an earlier Offload ran with, not this one), and
/// the file is left as the user wrote it.
#[tokio::test]
async fn a_new_users_hand_written_servers_stay_confined_with_the_network_off() {
    let ctx = offload_testkit::TestContext::new();
    let written = serde_json::to_string_pretty(&json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": offload_testkit::TestContext::fixture(&[])},
    }))
    .unwrap();
    std::fs::write(&ctx.config_path, &written).unwrap();
    let config = ctx.config_path.to_str().unwrap().to_owned();
    let servers_line = || {
        let out = ctx.run_offload(&["doctor", "--config", &config]);
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        said.lines()
            .find(|l| l.starts_with("servers"))
            .unwrap_or_else(|| panic!("no servers line: {said}"))
            .to_owned()
    };
    assert!(servers_line().ends_with("1 confined"), "{}", servers_line());
    let client = ctx.client().await;
    let r = offload_testkit::call(&client, "fx__echo", json!({"text": "hi"})).await;
    assert_eq!(offload_testkit::text(&r), "hi");
    client.cancel().await.unwrap();
    let after = servers_line();
    assert!(after.ends_with("1 confined"), "{after}");
    assert_eq!(std::fs::read_to_string(&ctx.config_path).unwrap(), written);
}

/// A confined server that fails to start because it was refused a path says so: the error names
/// the path and the `sandbox` change that allows it. The control: the same server reading a
/// file in an allowed directory gets no such advice.
#[tokio::test]
async fn a_start_refused_by_confinement_says_what_was_refused_and_how_to_allow_it() {
    let ctx = offload_testkit::TestContext::new();
    let outside = ctx.work.join("settings.txt");
    let inside = ctx.root.join("settings.txt");
    for f in [&outside, &inside] {
        std::fs::write(f, "setting=1\n").unwrap();
    }
    let reader = |file: &std::path::Path| json!({"command": "sh", "args": ["-c", format!("cat {} >&2; exit 1", file.display())]});
    std::fs::write(
        &ctx.config_path,
        json!({
            "roots": [ctx.root],
            "tools": {"expose": "meta"},
            "mcpServers": {"refused": reader(&outside), "allowed": reader(&inside)},
        })
        .to_string(),
    )
    .unwrap();
    let client = ctx.client().await;
    let r = offload_testkit::call(&client, "list_available_tools", json!({})).await;
    let servers = offload_testkit::structured(&r)["servers"].clone();
    let error = |name: &str| {
        servers
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .and_then(|s| s["error"].as_str())
            .unwrap_or_else(|| panic!("{name} failed: {servers}"))
            .to_owned()
    };
    let refused = error("refused");
    assert!(
        refused.contains(&format!(
            "it was refused {}: to allow it, add \"sandbox\": {{\"read\": [\"{}\"]}}",
            outside.display(),
            outside.display()
        )),
        "{refused}"
    );
    let allowed = error("allowed");
    assert!(
        allowed.contains("setting=1"),
        "the control read it: {allowed}"
    );
    assert!(!allowed.contains("confines"), "{allowed}");
    client.cancel().await.unwrap();
}
