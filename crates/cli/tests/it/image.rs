//! The OCI image (`scripts/image.sh`, buildah, from scratch) run under podman as the Helm chart's
//! pod runs it: the chart's arguments, user and `config.json` (read-only), its data on a volume,
//! a directory of files mounted read-only as a root, the image's own files read-only (`/tmp` a
//! tmpfs); then probes and metrics over HTTP, an official-SDK client's calls (rmcp's streamable
//! HTTP client with an access token made through the image), and SIGTERM ending it gracefully.
//!
//! podman runs with runc and cgroupfs and with limits no higher than this machine's, which
//! this test machine needs (its cgroups are mixed v1/v2 and its hard limits low); a cluster
//! runs the image with its own runtime.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use offload_testkit::{call, target_bin, text};
use serde_json::json;

use crate::chart::run as ok;
use crate::http::{http_client, metrics};

/// podman with the runtime settings this machine needs.
fn podman() -> Command {
    let mut cmd = Command::new("podman");
    cmd.args(["--runtime", "runc", "--cgroup-manager", "cgroupfs"]);
    cmd
}

/// The `--ulimit` flags: open files as this process has them, processes well under its limit.
fn ulimits() -> Vec<String> {
    let limits = std::fs::read_to_string("/proc/self/limits").unwrap_or_default();
    let hard = |name: &str| {
        limits
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().rev().nth(1))
            .and_then(|v| v.parse::<u64>().ok())
    };
    let files = hard("Max open files").unwrap_or(1024).min(65536);
    vec![
        "--ulimit".into(),
        format!("nofile={files}:{files}"),
        "--ulimit".into(),
        "nproc=4096:4096".into(),
    ]
}

/// A directory the image's user (65532) owns.
fn owned_dir(path: &Path) {
    std::fs::create_dir_all(path).unwrap();
    ok(Command::new("chown").args(["-R", "65532:65532"]).arg(path));
}

/// The chart's arguments with its listening address (all interfaces, 8765) moved to a free
/// loopback port: the test runs on the host's network.
fn chart_args(args: &[String], port: u16) -> Vec<String> {
    assert!(
        args.iter().any(|a| a == "0.0.0.0:8765"),
        "the chart listens elsewhere: {args:?}"
    );
    args.iter()
        .map(|a| {
            if a == "0.0.0.0:8765" {
                format!("127.0.0.1:{port}")
            } else {
                a.clone()
            }
        })
        .collect()
}

/// Removes the container and the image however the test ends.
struct Cleanup {
    container: String,
    image: String,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        let _ = podman().args(["rm", "-f", &self.container]).output();
        let _ = podman().args(["rmi", "-f", &self.image]).output();
    }
}

#[tokio::test]
#[ignore = "needs buildah and podman: run scripts/setup-interop.sh"]
async fn the_image_from_scratch_serves_as_a_user_with_probes_metrics_and_a_graceful_stop() {
    offload_testkit::install_crypto_provider();
    let bin_dir = target_bin("offload").parent().unwrap().to_path_buf();
    let tag = format!("localhost/offload-test:{}", std::process::id());
    let name = format!("offload-test-{}", std::process::id());
    let _cleanup = Cleanup {
        container: name.clone(),
        image: tag.clone(),
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/image.sh");
    let built = ok(Command::new(&script)
        .arg("--bin-dir")
        .arg(&bin_dir)
        .args(["--tag", &tag]));
    assert!(built.contains("from scratch"), "{built}");

    // From scratch: one layer, no shell, a user that is not root.
    let inspect = |format: &str| {
        ok(podman().args(["image", "inspect", "--format", format, &tag]))
            .trim()
            .to_owned()
    };
    assert_eq!(inspect("{{len .RootFS.Layers}}"), "1");
    assert_eq!(inspect("{{.Config.User}}"), "65532:65532");
    let shell = podman()
        .args(["run", "--rm", "--entrypoint", "/bin/sh"])
        .args(ulimits())
        .args([&tag, "-c", "true"])
        .output()
        .unwrap();
    assert!(!shell.status.success(), "the image has a shell");

    // The pod the chart renders for a team with one directory of files.
    let objects = crate::chart::render(&json!({
        "config": {"roots": ["/files"], "mcpServers": {}},
        "roots": [{"name": "files", "mountPath": "/files", "readOnly": true,
            "volume": {"emptyDir": {}}}],
    }));
    let pod = &crate::chart::kind(&objects, "Deployment").unwrap()["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    let args: Vec<String> = container["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_owned())
        .collect();
    let user = format!(
        "{}:{}",
        pod["securityContext"]["runAsUser"], pod["securityContext"]["runAsGroup"]
    );
    let config_json = crate::chart::kind(&objects, "ConfigMap").unwrap()["data"]["config.json"]
        .as_str()
        .unwrap()
        .to_owned();

    // Its data on a volume, its configuration read-only, a directory of files as its root.
    let home = tempfile::tempdir().unwrap();
    let data = home.path().join("data");
    let config = home.path().join("config");
    let files = home.path().join("files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("rows.csv"), "id,name\n1,a\n2,b\n3,c\n").unwrap();
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("config.json"), config_json).unwrap();
    owned_dir(&data);
    let volumes = [
        "-v".to_owned(),
        format!("{}:/data", data.display()),
        "-v".to_owned(),
        format!("{}:/data/.config/offload:ro", config.display()),
        "-v".to_owned(),
        format!("{}:/files:ro", files.display()),
        "--user".to_owned(),
        user,
    ];
    let made = ok(podman()
        .args(["run", "--rm"])
        .args(ulimits())
        .args(&volumes)
        .args([&tag, "token", "create", "agent", "--scope", "read,call"]));
    let token = made
        .split_whitespace()
        .find(|w| w.starts_with("offload_"))
        .expect("a token printed")
        .to_owned();

    let port = offload_testkit::free_port();
    ok(podman()
        .args([
            "run",
            "-d",
            "--name",
            &name,
            "--network",
            "host",
            "--read-only",
        ])
        .args(ulimits())
        .args(&volumes)
        .arg(&tag)
        .args(chart_args(&args, port)));
    let base = format!("http://127.0.0.1:{port}");
    let http = reqwest::Client::new();
    let started = Instant::now();
    loop {
        if let Ok(r) = http.get(format!("{base}/healthz")).send().await
            && r.status() == 200
        {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no /healthz within 30 s: {}",
            ok(podman().args(["logs", &name]))
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let ready = http.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 200);
    let user = ok(podman().args(["top", &name, "user", "comm"]));
    assert!(
        user.lines()
            .skip(1)
            .all(|l| !l.trim_start().starts_with("root")),
        "a process runs as root: {user}"
    );

    // A client's calls: the mounted root listed, the file queried.
    let client = http_client(&format!("{base}/mcp"), &token).await;
    let r = call(&client, "list_allowed_directories", json!({})).await;
    assert!(text(&r).contains("/files"), "{}", text(&r));
    let r = call(
        &client,
        "query_file",
        json!({"path": "/files/rows.csv", "sql": "SELECT sum(id) AS total FROM data"}),
    )
    .await;
    assert!(text(&r).contains('6'), "{}", text(&r));
    let scrape = metrics(&base, &token).await;
    assert!(
        scrape
            .contains(r#"offload_calls_total{server="offload",tool="query_file",outcome="ok"} 1"#),
        "{scrape}"
    );
    let _ = client.cancel().await;

    // SIGTERM (what an orchestrator sends): it stops at once and cleanly.
    let t = Instant::now();
    ok(podman().args(["stop", "-t", "20", &name]));
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "stopping took {:?}",
        t.elapsed()
    );
    let code = ok(podman().args(["inspect", "--format", "{{.State.ExitCode}}", &name]));
    assert_eq!(code.trim(), "0", "{}", ok(podman().args(["logs", &name])));
}
