//! The Helm chart (`crates/cli/deploy/chart`): linted and rendered by the real helm, every
//! rendered object checked against the Kubernetes API's schemas (kubernetes-validate, strict),
//! and what matters read back: the probes point at the paths Offload serves, the pod runs as
//! the image's user with nothing it does not need, `config.json` is the values' config, the
//! autoscaler and the disruption budget appear when asked. The image test runs the pod the
//! chart renders under podman (`image.rs`).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// Where `scripts/setup-interop.sh` installs a program of the interop venv.
fn venv_bin(name: &str) -> PathBuf {
    offload_testkit::interop_dir().join(".venv/bin").join(name)
}

pub(crate) fn chart_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/chart")
}

/// Runs `cmd`, which must succeed; its standard output.
pub(crate) fn run(cmd: &mut Command) -> String {
    let out = cmd.output().expect("run a command");
    assert!(
        out.status.success(),
        "{cmd:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The chart rendered with `values` (a values file's content), checked against Kubernetes
/// 1.31's schemas; its objects as JSON values.
pub(crate) fn render(values: &Value) -> Vec<Value> {
    let dir = tempfile::tempdir().unwrap();
    let values_file = dir.path().join("values.yaml");
    std::fs::write(&values_file, serde_yaml::to_string(values).unwrap()).unwrap();
    let text = run(Command::new(venv_bin("helm"))
        .args(["template", "team"])
        .arg(chart_dir())
        .arg("-f")
        .arg(&values_file));
    let rendered = dir.path().join("rendered.yaml");
    std::fs::write(&rendered, &text).unwrap();
    let checked = run(Command::new(venv_bin("kubernetes-validate"))
        .args(["-k", "1.31.0", "--strict"])
        .arg(&rendered));
    assert!(
        !checked.contains("ERROR") && !checked.contains("WARN"),
        "{checked}"
    );
    let objects: Vec<Value> = serde_yaml::Deserializer::from_str(&text)
        .filter_map(|doc| {
            let v: Value = serde::Deserialize::deserialize(doc).ok()?;
            (!v.is_null()).then_some(v)
        })
        .collect();
    assert_eq!(
        checked.matches("passed for resource").count(),
        objects.len(),
        "every object checked: {checked}"
    );
    objects
}

pub(crate) fn kind<'a>(objects: &'a [Value], kind: &str) -> Option<&'a Value> {
    objects.iter().find(|o| o["kind"] == kind)
}

#[test]
#[ignore = "needs helm and kubernetes-validate: run scripts/setup-interop.sh"]
fn the_chart_lints_renders_valid_objects_and_says_what_offload_serves() {
    run(Command::new(venv_bin("helm"))
        .args(["lint", "--strict"])
        .arg(chart_dir()));

    // The defaults: one replica, a volume for /data, probes, a locked-down pod, no autoscaler.
    let objects = render(&json!({}));
    let kinds: Vec<&str> = objects.iter().filter_map(|o| o["kind"].as_str()).collect();
    assert_eq!(
        kinds,
        [
            "PodDisruptionBudget",
            "ConfigMap",
            "PersistentVolumeClaim",
            "Service",
            "Deployment"
        ]
    );
    let deployment = kind(&objects, "Deployment").unwrap();
    assert_eq!(deployment["spec"]["replicas"], 1);
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(
        container["args"],
        json!(["serve", "--http", "0.0.0.0:8765"])
    );
    assert_eq!(container["image"], "offload:0.1.0");
    assert_eq!(container["livenessProbe"]["httpGet"]["path"], "/healthz");
    assert_eq!(container["readinessProbe"]["httpGet"]["path"], "/readyz");
    assert_eq!(container["ports"][0]["containerPort"], 8765);
    assert_eq!(pod["securityContext"]["runAsUser"], 65532);
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["automountServiceAccountToken"], false);
    let locked = &container["securityContext"];
    assert_eq!(locked["readOnlyRootFilesystem"], true);
    assert_eq!(locked["allowPrivilegeEscalation"], false);
    assert_eq!(locked["capabilities"]["drop"], json!(["ALL"]));
    let mounts: Vec<&str> = container["volumeMounts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["mountPath"].as_str())
        .collect();
    assert_eq!(mounts, ["/data", "/data/.config/offload", "/tmp"]);
    let config = kind(&objects, "ConfigMap").unwrap()["data"]["config.json"]
        .as_str()
        .unwrap();
    let config: Value = serde_json::from_str(config).unwrap();
    assert_eq!(config, json!({"roots": [], "mcpServers": {}}));
    assert!(kind(&objects, "HorizontalPodAutoscaler").is_none());
    let service = kind(&objects, "Service").unwrap();
    assert_eq!(
        service["spec"]["selector"],
        deployment["spec"]["selector"]["matchLabels"]
    );

    // A team's values: a remote server, a root on a claim, a secret's keys as variables,
    // autoscaling (the Deployment then leaves the replica count to it).
    let objects = render(&json!({
        "config": {
            "roots": ["/files/reports"],
            "mcpServers": {"tickets": {"url": "https://tickets.example.com/mcp",
                "headers": {"Authorization": "Bearer ${env:TICKETS_TOKEN}"}}},
            "http": {"state": {"path": "s3://team/offload-state", "region": "eu-west-1"}}
        },
        "roots": [{"name": "reports", "mountPath": "/files/reports",
            "volume": {"persistentVolumeClaim": {"claimName": "reports"}}}],
        "envFromSecret": "offload-env",
        "extraArgs": ["--allow-host", "offload.example.com"],
        "autoscaling": {"enabled": true, "minReplicas": 3, "maxReplicas": 9},
        "persistence": {"existingClaim": "offload-data", "accessModes": ["ReadWriteMany"]},
    }));
    let deployment = kind(&objects, "Deployment").unwrap();
    assert!(deployment["spec"].get("replicas").is_none());
    let pod = &deployment["spec"]["template"]["spec"];
    let container = &pod["containers"][0];
    assert_eq!(
        container["args"],
        json!([
            "serve",
            "--http",
            "0.0.0.0:8765",
            "--allow-host",
            "offload.example.com"
        ])
    );
    assert_eq!(container["envFrom"][0]["secretRef"]["name"], "offload-env");
    let volumes = pod["volumes"].as_array().unwrap();
    assert!(volumes.iter().any(
        |v| v["name"] == "root-reports" && v["persistentVolumeClaim"]["claimName"] == "reports"
    ));
    assert!(
        volumes
            .iter()
            .any(|v| v["name"] == "data"
                && v["persistentVolumeClaim"]["claimName"] == "offload-data")
    );
    assert!(kind(&objects, "PersistentVolumeClaim").is_none());
    let hpa = kind(&objects, "HorizontalPodAutoscaler").unwrap();
    assert_eq!(hpa["spec"]["minReplicas"], 3);
    assert_eq!(
        hpa["spec"]["scaleTargetRef"]["name"],
        deployment["metadata"]["name"]
    );
    let config: Value = serde_json::from_str(
        kind(&objects, "ConfigMap").unwrap()["data"]["config.json"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        config["mcpServers"]["tickets"]["headers"]["Authorization"], "Bearer ${env:TICKETS_TOKEN}",
        "the secret's reference, not a value"
    );
    // Replicas sharing state reach each other at their pod's address.
    assert_eq!(config["http"]["advertise"], "http://${env:POD_IP}:8765/mcp");
    assert_eq!(config["http"]["state"]["path"], "s3://team/offload-state");
    let pod_ip = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == "POD_IP")
        .expect("POD_IP in the environment");
    assert_eq!(pod_ip["valueFrom"]["fieldRef"]["fieldPath"], "status.podIP");
}
