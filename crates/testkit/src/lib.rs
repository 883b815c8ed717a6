//! Test helpers shared by Offload's integration tests and benchmarks: locating the built
//! binaries (here), a [`TestContext`] with its own home, config and roots in a temporary
//! directory (`context`), a real rmcp client that launches `offload mcp` over real pipes
//! (`client`), reading results (`results`) and processes (`processes`), a served folder
//! (`served`), and the real outside parts a test starts: S3, GCS, nginx, a keyring, the wire.

use std::path::PathBuf;

use serde_json::{Value, json};

pub mod docs;
pub mod gcs;
pub mod keyring;
pub mod nginx;
pub mod s3;
pub mod wire;

mod client;
mod context;
mod processes;
mod results;
mod served;

pub use client::*;
pub use context::*;
pub use processes::*;
pub use results::*;
pub use served::*;

/// `tests/interop` of the checkout the tests run in, found from the working directory (cargo
/// runs a test in its package's directory) rather than from where this library was compiled:
/// one target directory serves several checkouts (CI's clone, the working copy), and a library
/// built for one must not point another's tests at files that are gone.
pub fn interop_dir() -> PathBuf {
    let here = std::env::current_dir().unwrap_or_default();
    here.ancestors()
        .map(|d| d.join("tests/interop"))
        .find(|d| d.join("requirements.txt").is_file())
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/interop"))
}

/// Where `scripts/setup-model.sh` installs the sentence model, for the search's tests and bench.
pub fn search_model_path() -> PathBuf {
    let home = std::env::var_os("HOME").unwrap_or_default();
    PathBuf::from(home).join(".cache/offload/models/all-MiniLM-L6-v2-int8.onnx")
}

/// The installed sentence model, which a test needs.
pub fn search_model() -> PathBuf {
    let path = search_model_path();
    assert!(
        path.is_file(),
        "{} is missing: run scripts/setup-model.sh",
        path.display()
    );
    path
}

/// A port on 127.0.0.1 that nothing listens on right now (for a server a test starts).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A built binary of this workspace (`offload`, `offload-fixture`), next to the running test or
/// bench executable in the same target directory.
pub fn target_bin(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("current exe");
    let mut dir = exe.parent().expect("exe dir").to_path_buf();
    if dir.ends_with("deps") {
        dir.pop();
    }
    let path = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    assert!(
        path.exists(),
        "{} is missing: build the workspace binaries first (cargo build --workspace --bins)",
        path.display()
    );
    path
}

/// Makes ring the test process's TLS provider (as the engine does for `offload`): the reqwest
/// clients of tests and benches, and rmcp's, are built without one of their own.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}

/// A tool definition as a server lists it: `params` are (name, description) pairs of string
/// parameters. (A public tool-retrieval set's tools, served by the fixture.)
pub fn tool_definition(name: &str, description: &str, params: &[(String, String)]) -> Value {
    let properties: serde_json::Map<String, Value> = params
        .iter()
        .map(|(n, d)| (n.clone(), json!({"type": "string", "description": d})))
        .collect();
    json!({
        "name": name,
        "description": description,
        "inputSchema": {"type": "object", "properties": properties},
    })
}
