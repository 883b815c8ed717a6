use std::sync::Arc;

use offload_app::AppState;
use offload_engine::config::{AppDirs, NoKeychain};
use offload_engine::{Engine, EngineOptions};
use offload_testkit::{TestContext, target_bin};
use serde_json::{Value, json};
use tauri::test::{
    INVOKE_KEY, MockRuntime, get_ipc_response, mock_builder, mock_context, noop_assets,
};
use tauri::webview::InvokeRequest;
use tauri::{App, WebviewWindow, WebviewWindowBuilder};

pub struct Harness {
    pub t: TestContext,
    pub engine: Arc<Engine>,
    pub app: App<MockRuntime>,
    window: WebviewWindow<MockRuntime>,
}

pub fn harness(config: Value) -> Harness {
    harness_with(config, Arc::new(NoKeychain))
}

pub fn harness_with(
    config: Value,
    secrets: Arc<dyn offload_engine::config::SecretSource>,
) -> Harness {
    let t = TestContext::new();
    t.write_config(config);
    let options = EngineOptions::under(&t.home, t.config_path.clone(), secrets);
    let engine = Arc::new(Engine::load(options).expect("engine").0);
    let app = offload_app::app(mock_builder(), AppState::new(engine.clone()))
        .build(mock_context(noop_assets()))
        .expect("app");
    let window = WebviewWindowBuilder::new(&app, "main", Default::default())
        .build()
        .expect("window");
    Harness {
        t,
        engine,
        app,
        window,
    }
}

impl Harness {
    fn invoke(&self, cmd: &str, args: Value) -> Result<Value, Value> {
        get_ipc_response(
            &self.window,
            InvokeRequest {
                cmd: cmd.into(),
                callback: tauri::ipc::CallbackFn(0),
                error: tauri::ipc::CallbackFn(1),
                // The mock webview serves the app from `tauri://localhost` (a local origin).
                url: "tauri://localhost".parse().unwrap(),
                body: tauri::ipc::InvokeBody::Json(args),
                headers: Default::default(),
                invoke_key: INVOKE_KEY.to_string(),
            },
        )
        .map(|body| body.deserialize::<Value>().expect("json answer"))
    }

    fn ok(&self, cmd: &str, args: Value) -> Value {
        self.invoke(cmd, args)
            .unwrap_or_else(|e| panic!("{cmd} failed: {e}"))
    }

    pub fn file(&self) -> Value {
        serde_json::from_slice(&std::fs::read(&self.t.config_path).unwrap()).unwrap()
    }
}

fn fixture_spec() -> Value {
    json!({"transport": "stdio", "command": target_bin("offload-fixture"), "args": [], "enabled": true})
}

#[test]
fn server_commands_add_list_toggle_restart_edit_and_remove() {
    let h = harness(json!({"mcpServers": {}}));
    assert_eq!(h.ok("servers", json!({})), json!([]));

    h.ok(
        "put_server",
        json!({"previous": null, "name": "fx", "spec": fixture_spec()}),
    );
    let tools = h.ok("server_tools", json!({"name": "fx"}));
    assert!(
        tools
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "echo"),
        "{tools}"
    );
    let listed = h.ok("servers", json!({}));
    assert_eq!(listed[0]["name"], "fx");
    assert_eq!(listed[0]["status"], "ready");
    assert_eq!(listed[0]["spec"]["transport"], "stdio");
    assert!(listed[0]["toolCount"].as_u64().unwrap() > 0);

    h.ok(
        "set_server_enabled",
        json!({"name": "fx", "enabled": false}),
    );
    assert_eq!(h.ok("servers", json!({}))[0]["status"], "disabled");
    assert_eq!(h.file()["mcpServers"]["fx"]["disabled"], true);
    let refused = h
        .invoke("restart_server", json!({"name": "fx"}))
        .unwrap_err();
    assert_eq!(refused["code"], "server_disabled");
    h.ok("set_server_enabled", json!({"name": "fx", "enabled": true}));
    let count = h.ok("restart_server", json!({"name": "fx"}));
    assert_eq!(count, listed[0]["toolCount"]);

    let mut spec = fixture_spec();
    spec["timeoutSecs"] = json!(9);
    h.ok(
        "put_server",
        json!({"previous": "fx", "name": "renamed", "spec": spec}),
    );
    assert_eq!(h.file()["mcpServers"]["renamed"]["timeoutSecs"], 9);

    let e = h
        .invoke(
            "put_server",
            json!({"previous": null, "name": "bad", "spec": {"transport": "stdio", "command": ""}}),
        )
        .unwrap_err();
    assert_eq!(e["code"], "invalid_arguments");
    assert!(
        e["message"].as_str().unwrap().contains("needs a command"),
        "{e}"
    );
    let e = h
        .invoke("server_tools", json!({"name": "nope"}))
        .unwrap_err();
    assert_eq!(e["code"], "unknown_server");

    h.ok("remove_server", json!({"name": "renamed"}));
    assert_eq!(h.ok("servers", json!({})), json!([]));
}

#[test]
fn root_commands_add_default_read_only_and_remove() {
    let h = harness(json!({"mcpServers": {}}));
    let builtin = h.ok("roots", json!({}));
    assert_eq!(builtin.as_array().unwrap().len(), 1);
    assert_eq!(builtin[0]["configured"], false);

    let dir = h.t.root.display().to_string();
    h.ok("add_root", json!({"path": dir, "writable": true}));
    h.ok("set_default_root", json!({"path": dir}));
    let roots = h.ok("roots", json!({}));
    assert_eq!(roots[0]["path"], dir);
    assert_eq!(roots[0]["default"], true);
    assert_eq!(roots[0]["files"], 0);

    h.ok("set_root_writable", json!({"path": dir, "writable": false}));
    assert_eq!(h.file()["roots"][0]["writable"], false);
    let e = h
        .invoke(
            "add_root",
            json!({"path": "not/absolute", "writable": true}),
        )
        .unwrap_err();
    assert_eq!(e["code"], "invalid_arguments");
    h.ok("remove_root", json!({"path": dir}));
    assert_eq!(h.ok("roots", json!({})).as_array().unwrap().len(), 1);
}

/// The Add bucket form's command against a real S3 server (weed mini). The keychain is
/// keyring-core's in-memory store here (this test runs without a Secret Service; the E2E run
/// has a real one).
#[test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
fn a_bucket_is_checked_then_added_with_its_keys_in_the_keychain() {
    use offload_engine::config::SecretSource as _;
    use offload_testkit::s3::{ACCESS_KEY, BUCKET, SECRET_KEY, Weed};
    let weed = Weed::shared();
    let prefix = weed.prefix("app");
    let keychain = Arc::new(offload_engine::keychain::Keychain::with_store(
        keyring_core::mock::Store::new().unwrap(),
    ));
    let h = harness_with(json!({"mcpServers": {}}), keychain.clone());
    let url = format!("s3://{BUCKET}/{prefix}");
    let form = |endpoint: &str| {
        json!({"form": {"url": url, "endpoint": endpoint, "region": "us-east-1",
            "accessKeyId": ACCESS_KEY, "secretAccessKey": SECRET_KEY, "writable": true}})
    };
    // A port nothing listens on: refused with the reason, nothing written, no secret kept.
    let closed = offload_testkit::free_port();
    let before = std::fs::read_to_string(&h.t.config_path).unwrap();
    let e = h
        .invoke(
            "add_bucket_root",
            form(&format!("http://127.0.0.1:{closed}")),
        )
        .unwrap_err();
    assert_eq!(e["code"], "path_unusable", "{e}");
    assert!(e["message"].as_str().unwrap().contains(&url), "{e}");
    assert_eq!(std::fs::read_to_string(&h.t.config_path).unwrap(), before);
    let key_name = format!("bucket-{BUCKET}_accesskeyid");
    assert_eq!(
        keychain.secret(&key_name).unwrap(),
        None,
        "a refused bucket keeps no secret"
    );

    h.ok("add_bucket_root", form(&weed.endpoint));
    let text = std::fs::read_to_string(&h.t.config_path).unwrap();
    assert!(
        !text.contains(SECRET_KEY) && !text.contains(ACCESS_KEY),
        "{text}"
    );
    let entry = h.file()["roots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == url)
        .cloned()
        .expect("the bucket root is written");
    assert_eq!(entry["accessKeyId"], format!("${{keyring:{key_name}}}"));
    assert_eq!(
        keychain.secret(&key_name).unwrap().as_deref(),
        Some(ACCESS_KEY)
    );
    assert_eq!(entry["endpoint"], weed.endpoint);
    let roots = h.ok("roots", json!({}));
    let row = roots
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == url)
        .cloned()
        .unwrap();
    assert_eq!(row["resolved"], url);
    assert_eq!(row["problem"], Value::Null);
    assert_eq!(row["writable"], true);
    let e = h
        .invoke("add_bucket_root", form(&weed.endpoint))
        .unwrap_err();
    assert!(
        e["message"].as_str().unwrap().contains("already allowed"),
        "{e}"
    );
}

/// The same form for a GCS bucket (fake-gcs-server): the form's secret is the service-account
/// key, which goes to the keychain; the root is checked by listing it through the emulator.
#[test]
#[ignore = "needs fake-gcs-server: run scripts/setup-interop.sh"]
fn a_gcs_bucket_is_added_with_its_service_account_key_in_the_keychain() {
    use offload_engine::config::SecretSource as _;
    use offload_testkit::gcs::{FakeGcs, emulator_key};
    let data = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(data.path().join("data/team")).unwrap();
    std::fs::write(data.path().join("data/team/a.csv"), "x\n1\n").unwrap();
    let gcs = FakeGcs::start(data.path());
    let keychain = Arc::new(offload_engine::keychain::Keychain::with_store(
        keyring_core::mock::Store::new().unwrap(),
    ));
    let h = harness_with(json!({"mcpServers": {}}), keychain.clone());
    let key = emulator_key();
    h.ok(
        "add_bucket_root",
        json!({"form": {"url": "gs://data/team", "endpoint": gcs.endpoint,
            "secretAccessKey": key, "writable": false}}),
    );
    let entry = h.file()["roots"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "gs://data/team")
        .cloned()
        .expect("the bucket root is written");
    let name = "bucket-data_serviceaccountkey";
    assert_eq!(entry["serviceAccountKey"], format!("${{keyring:{name}}}"));
    assert_eq!(entry["endpoint"], gcs.endpoint);
    assert_eq!(entry.get("accessKeyId"), None);
    assert_eq!(
        keychain.secret(name).unwrap().as_deref(),
        Some(key.as_str())
    );
    let roots = h.ok("roots", json!({}));
    let row = roots
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["path"] == "gs://data/team")
        .cloned()
        .unwrap();
    assert_eq!(row["problem"], Value::Null, "{row}");
    assert_eq!(row["writable"], false);
}

/// A response stored in a bucket root by another process is listed on the Responses screen,
/// previewed, and deleted with its record (weed mini; keys written plainly in this config).
#[test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
fn responses_in_a_bucket_are_listed_previewed_and_deleted_with_their_record() {
    use offload_testkit::s3::{BUCKET, Weed};
    let weed = Weed::shared();
    let prefix = weed.prefix("app-responses");
    let t = TestContext::new();
    let config = json!({"roots": [t.root, weed.root(&prefix, true)], "mcpServers": {}});
    let h = harness(config.clone());
    // Another Offload process (an engine of its own over the same config) stores a response.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let _in_runtime = rt.enter();
    let other = {
        let dirs = AppDirs::under(&t.home);
        let config: offload_engine::config::Config = serde_json::from_value(config).unwrap();
        Arc::new(Engine::from_config(&config, &dirs, Arc::new(NoKeychain)).0)
    };
    let url = format!("s3://{BUCKET}/{prefix}/answers");
    let stored = rt
        .block_on(tokio::task::spawn_blocking({
            let other = other.clone();
            let url = url.clone();
            move || {
                other.store().store(
                    &other.roots(),
                    offload_engine::StoreRequest {
                        origin: offload_engine::StoreOrigin {
                            server: "fx",
                            tool: "rows",
                            arguments: &json!({}),
                            description: Some("rows in a bucket".into()),
                            duration: std::time::Duration::ZERO,
                        },
                        destination: offload_engine::StoreDestination {
                            storage_path: Some(&url),
                            filename: Some("rows.csv"),
                            format: None,
                        },
                        result: rmcp::model::CallToolResult::structured(
                            json!({"rows": [{"a": 1}, {"a": 2}]}),
                        ),
                    },
                )
            }
        }))
        .unwrap()
        .unwrap();
    let path = stored.record.path.clone();
    assert_eq!(path, format!("{url}/rows.csv"));

    let listed = h.ok("responses", json!({}));
    let item = listed["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"] == path)
        .cloned()
        .unwrap_or_else(|| panic!("{path} not in {listed}"));
    assert_eq!(item["description"], "rows in a bucket");
    assert_eq!(item["deletable"], true);
    assert_eq!(item["root"], format!("s3://{BUCKET}/{prefix}"));
    let page = h.ok(
        "file_content",
        json!({"path": path, "offset": 0, "length": 10}),
    );
    assert!(page.to_string().contains("\"a\""), "{page}");

    h.ok("delete_response", json!({"path": path}));
    let left = rt.block_on(weed.list(&prefix));
    assert!(left.iter().all(|k| !k.ends_with("rows.csv")), "{left:?}");
    assert!(
        left.iter().all(|k| !k.contains("/.offload/records/")),
        "{left:?}"
    );
    let listed = h.ok("responses", json!({}));
    assert!(!listed.to_string().contains(&path), "{listed}");
}

#[test]
fn overview_status_and_pause() {
    let h = harness(
        json!({"mcpServers": {"fx": {"command": target_bin("offload-fixture"), "disabled": true}}}),
    );
    let status = h.ok("status", json!({}));
    assert_eq!(status["paused"], false);
    assert_eq!(status["servers"]["disabled"], 1);
    let paused = h.ok("set_paused", json!({"paused": true}));
    assert_eq!(paused["paused"], true);
    let overview = h.ok("overview", json!({}));
    assert_eq!(overview["status"]["paused"], true);
    assert_eq!(overview["clients"], json!([]));
    assert_eq!(overview["today"]["calls"], 0);
    assert_eq!(
        overview["configPath"],
        h.t.config_path.display().to_string()
    );
}

#[test]
fn a_broken_config_file_is_reported_and_kept() {
    let h = harness(json!({"mcpServers": {}}));
    std::fs::write(&h.t.config_path, "{ broken").unwrap();
    let e = h
        .invoke(
            "put_server",
            json!({"previous": null, "name": "fx", "spec": fixture_spec()}),
        )
        .unwrap_err();
    assert_eq!(e["code"], "config_invalid");
    assert!(e["message"].as_str().unwrap().contains("line 1"), "{e}");
    assert_eq!(
        std::fs::read_to_string(&h.t.config_path).unwrap(),
        "{ broken"
    );
}

#[test]
fn response_preview_log_and_client_commands_answer_the_window() {
    let h = harness(json!({"mcpServers": {}}));
    let root = h.ok("roots", json!({}))[0]["resolved"]
        .as_str()
        .unwrap()
        .to_owned();
    let csv = std::path::Path::new(&root).join("people.csv");
    std::fs::write(&csv, "id,name\n1,Ada\n2,Grace\n").unwrap();
    let path = csv.display().to_string();

    let list = h.ok("responses", json!({}));
    assert_eq!(list["items"][0]["name"], "people.csv");
    assert_eq!(list["items"][0]["deletable"], true);
    let info = h.ok("file_info", json!({"path": path}));
    assert!(info["root"].is_string());
    assert_eq!(h.ok("file_summary", json!({"path": path}))["line_count"], 3);
    let schema = h.ok("file_schema", json!({"path": path}));
    assert_eq!(
        schema["columns"][0],
        json!({"name": "id", "kind": "integer", "nullable": false, "samples": ["1", "2"]})
    );
    let page = h.ok(
        "file_content",
        json!({"path": path, "offset": 1, "length": 5}),
    );
    assert_eq!(page["rows"], json!([["2", "Grace"]]));
    // The Query tab: SQL over the file, an error in place, the whole result saved as a response.
    let q = h.ok(
        "file_query",
        json!({"path": path, "sql": "SELECT name, id * 10 AS x FROM data ORDER BY id DESC", "limit": 1}),
    );
    assert_eq!(q["columns"], json!([["name", "string"], ["x", "integer"]]));
    assert_eq!(q["rows"], json!([["Grace", "20"]]));
    assert_eq!(
        (q["rowCount"].as_u64(), q["truncated"].as_bool()),
        (Some(2), Some(true))
    );
    let e = h
        .invoke(
            "file_query",
            json!({"path": path, "sql": "SELECT nme FROM data", "limit": 5}),
        )
        .unwrap_err();
    assert_eq!(e["code"], "query_error");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("did you mean `name`?"),
        "{e}"
    );
    let saved = h.ok(
        "save_query",
        json!({"path": path, "sql": "SELECT name FROM data ORDER BY name"}),
    );
    let saved = saved.as_str().unwrap().to_owned();
    assert_eq!(
        std::fs::read_to_string(&saved).unwrap(),
        "name\nAda\nGrace\n"
    );
    let list = h.ok("responses", json!({}));
    assert!(
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["path"] == saved.as_str() && r["tool"] == "query_file"),
        "{list}"
    );
    h.ok("delete_response", json!({"path": saved}));
    let e = h
        .invoke("response_call", json!({"path": path}))
        .unwrap_err();
    assert_eq!(e["code"], "path_not_found");
    let e = h
        .invoke("file_summary", json!({"path": "/no/such/file"}))
        .unwrap_err();
    assert_eq!(e["code"], "path_not_found");
    h.ok("delete_response", json!({"path": path}));
    assert!(!csv.exists());

    assert_eq!(h.ok("call_log", json!({"limit": 10})), json!([]));
    let clients = h.ok("clients", json!({}));
    assert_eq!(clients.as_array().unwrap().len(), 9);
    let e = h
        .invoke("disconnect_client", json!({"id": "nope"}))
        .unwrap_err();
    assert!(
        e["message"].as_str().unwrap().contains("does not know"),
        "{e}"
    );
    // The test binary has no `offload` beside it (the app's bundle does).
    if which::which("offload").is_err() {
        let e = h
            .invoke("connect_client", json!({"id": "cursor"}))
            .unwrap_err();
        assert_eq!(e["code"], "server_unavailable", "{e}");
    }
}

/// A server's page: its prompts, resources and templates (from the conformance upstream, a
/// server written with the official TypeScript SDK), and the log messages it sent while a tool
/// ran, kept for the page whoever called.
#[test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
fn a_servers_prompts_resources_and_log() {
    let interop = std::fs::canonicalize(offload_testkit::interop_dir()).unwrap();
    let h = harness(json!({
        "mcpServers": {"conf": {"command": "node", "args": [interop.join("conformance_server.mjs")]}},
    }));
    let offers = h.ok("server_offers", json!({"name": "conf"}));
    let prompts: Vec<&str> = offers["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["exposed"].as_str().unwrap())
        .collect();
    assert!(
        prompts.contains(&"conf__test_prompt_with_arguments"),
        "{offers}"
    );
    let args = offers["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "test_prompt_with_arguments")
        .unwrap();
    assert_eq!(args["arguments"], json!(["arg1*", "arg2*"]));
    let resources = offers["resources"].as_array().unwrap();
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == "test://static-text" && r["template"] == false)
    );
    assert!(
        resources
            .iter()
            .any(|r| r["uri"] == "test://template/{id}/data" && r["template"] == true)
    );
    assert_eq!(offers["errors"], json!([]));

    assert_eq!(h.ok("server_log", json!({"name": "conf"})), json!([]));
    let engine = h.engine.clone();
    tauri::async_runtime::block_on(async move {
        let server = engine.pool().get("conf").unwrap();
        let r = server
            .call("test_tool_with_logging", None, Default::default())
            .await
            .unwrap();
        assert_ne!(r.is_error, Some(true));
    });
    let log = h.ok("server_log", json!({"name": "conf"}));
    let messages: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["message"].as_str().unwrap())
        .collect();
    assert_eq!(
        messages,
        [
            "Tool execution started",
            "Tool processing data",
            "Tool execution completed"
        ],
        "{log}"
    );
    assert_eq!(log[0]["level"], "info");
    let err = h.invoke("server_log", json!({"name": "nope"})).unwrap_err();
    assert_eq!(err["code"], "unknown_server", "{err}");
}
