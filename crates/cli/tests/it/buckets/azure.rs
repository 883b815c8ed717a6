//! Azure Blob roots (`az://`) against Azurite.

use std::time::{Duration, Instant};

use offload_testkit::TestContext;
use serde_json::json;

use super::{csv_body, reads_as_local, stores_new_objects};

/// Azurite's development account.
const ACCOUNT: &str = "devstoreaccount1";

/// Azure Blob roots (`az://`) through the same code, against Azurite (npm, the emulator Azure
/// documents), with its container and objects made by Azure's own Python client: the file tools
/// answer as on the local copy, a response is stored as a new blob and never replaces one, and
/// the guard holds. The key is Azurite's published development key.
#[tokio::test]
#[ignore = "needs Azurite and azure-storage-blob: run scripts/setup-interop.sh"]
async fn azure_blob_roots_work_through_the_same_code_against_azurite() {
    const KEY: &str =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    let dir = crate::interop::interop_dir();
    let data = tempfile::tempdir().unwrap();
    let said = data.path().join("azurite.log");
    let (mut emulator, mut endpoint) = azurite(&data.path().join("blobs"), &said);
    let ctx = TestContext::new();
    let csv = csv_body();
    let log: String = (0..30_000).map(|i| format!("entry {i}\n")).collect();
    std::fs::write(ctx.root.join("orders.csv"), &csv).unwrap();
    std::fs::write(ctx.root.join("app.log"), &log).unwrap();
    // Azure's client makes the container and the blobs (retried while Azurite starts).
    let started = Instant::now();
    loop {
        let made = tokio::process::Command::new(dir.join(".venv/bin/python"))
            .arg(dir.join("azure_blobs.py"))
            .args([&endpoint, ACCOUNT, KEY, "data"])
            .arg(format!(
                "team/orders.csv={}",
                ctx.root.join("orders.csv").display()
            ))
            .arg(format!(
                "team/app.log={}",
                ctx.root.join("app.log").display()
            ))
            .output()
            .await
            .unwrap();
        if made.status.success() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{}\nAzurite said: {}",
            String::from_utf8_lossy(&made.stderr),
            std::fs::read_to_string(&said).unwrap_or_default()
        );
        // Azurite gone (its port taken between `free_port` and its start): again on another.
        if emulator.try_wait().unwrap().is_some() {
            (emulator, endpoint) = azurite(&data.path().join("blobs"), &said);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    ctx.write_config(json!({
        "roots": [ctx.root, {"path": "az://data/team", "writable": true, "endpoint": endpoint,
            "account": ACCOUNT, "accessKey": KEY}],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
    }));
    reads_as_local(&ctx, "az://data/team").await;
    stores_new_objects(&ctx, "az://data/team").await;
}

/// Azurite's blob service on a free port of 127.0.0.1, keeping its blobs in `location` and its
/// errors in `log`; with the account's endpoint.
fn azurite(location: &std::path::Path, log: &std::path::Path) -> (tokio::process::Child, String) {
    let port = offload_testkit::free_port();
    let child = tokio::process::Command::new(
        crate::interop::interop_dir().join("node_modules/.bin/azurite-blob"),
    )
    .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
    .arg("--location")
    .arg(location)
    .args(["--silent", "--skipApiVersionCheck"])
    .stdout(std::process::Stdio::null())
    .stderr(std::fs::File::create(log).unwrap())
    .kill_on_drop(true)
    .spawn()
    .expect("start azurite");
    (child, format!("http://127.0.0.1:{port}/{ACCOUNT}"))
}
