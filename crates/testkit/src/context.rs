//! A [`TestContext`]: a temporary home with its own config, roots and log, and the `offload`
//! commands run in it.

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::{Client, connect, install_crypto_provider, target_bin};

/// A temporary home with a config file and one allowed directory.
pub struct TestContext {
    pub tmp: tempfile::TempDir,
    /// HOME (and XDG dirs below it) for the processes started here.
    pub home: PathBuf,
    /// An allowed, writable directory.
    pub root: PathBuf,
    /// Where a test puts an upstream server's own files (its database, its memory file): a
    /// folder that is not a root, as a user's home folder is not, so a confined server saves
    /// there through a private folder (its file linked back a moment after it is written).
    pub work: PathBuf,
    pub config_path: PathBuf,
    pub log_path: PathBuf,
}

impl Default for TestContext {
    fn default() -> Self {
        Self::new()
    }
}

impl TestContext {
    pub fn new() -> Self {
        install_crypto_provider();
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = std::fs::canonicalize(tmp.path()).expect("canonical tempdir");
        let home = base.join("home");
        let root = base.join("root");
        std::fs::create_dir_all(&home).expect("home");
        std::fs::create_dir_all(&root).expect("root");
        let work = base.join("work");
        std::fs::create_dir_all(&work).expect("work");
        Self {
            work,
            config_path: base.join("config.json"),
            log_path: base.join("offload.log"),
            tmp,
            home,
            root,
        }
    }

    /// A stdio server entry running the fixture server with `args`.
    pub fn fixture(args: &[&str]) -> Value {
        json!({"command": target_bin("offload-fixture"), "args": args})
    }

    /// A stdio server entry running the fixture with `tools` (MCP tool definitions) as its
    /// whole catalog, written to a file in this context (`--catalog`).
    pub fn fixture_serving(&self, tools: &[Value]) -> Value {
        let file = self
            .tmp
            .path()
            .join(format!("catalog-{}.json", next_number()));
        std::fs::write(&file, serde_json::to_vec(tools).expect("JSON")).expect("write catalog");
        let file = file.display().to_string();
        Self::fixture(&["--catalog", &file, "--page-size", "5000"])
    }

    /// Writes `config.json` with the given `mcpServers` and this context's root, upstream tools
    /// behind Offload's meta tools (`tools.expose: meta`, what most tests exercise; direct mode
    /// has tests of its own).
    pub fn write_servers(&self, servers: Value) {
        self.write_config(
            json!({"roots": [self.root], "mcpServers": servers, "tools": {"expose": "meta"}}),
        );
    }

    pub fn write_config(&self, config: Value) {
        std::fs::write(
            &self.config_path,
            serde_json::to_vec_pretty(&config).unwrap(),
        )
        .expect("write config");
    }

    /// `offload mcp` with this context's home, config and log file.
    pub fn offload_command(&self, extra_args: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(target_bin("offload"));
        cmd.arg("mcp").args(extra_args);
        self.isolate(&mut cmd);
        cmd
    }

    /// Points a command at this context: HOME, XDG dirs, config and log file.
    pub fn isolate(&self, cmd: &mut tokio::process::Command) {
        self.isolate_std(cmd.as_std_mut());
    }

    /// `isolate` for a `std::process::Command`.
    pub fn isolate_std(&self, cmd: &mut std::process::Command) {
        cmd.env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.home.join(".config"))
            .env("XDG_DATA_HOME", self.home.join(".local/share"))
            .env("XDG_RUNTIME_DIR", self.home.join(".run"))
            .env_remove("OFFLOAD_SOCKET")
            .env("OFFLOAD_CONFIG", &self.config_path)
            .env("OFFLOAD_LOG_FILE", &self.log_path)
            .env("OFFLOAD_LOG", "debug")
            .env_remove("APP_CONFIG_PATH")
            .env_remove("ABSTRACT_PROXY_SERVERS");
    }

    /// A real MCP client connected to a fresh `offload mcp` process.
    pub async fn client(&self) -> Client {
        self.client_with(&[]).await
    }

    pub async fn client_with(&self, extra_args: &[&str]) -> Client {
        connect(self.offload_command(extra_args)).await
    }

    /// Where `offload serve` and the app listen for this context's `offload mcp`.
    pub fn socket(&self) -> PathBuf {
        self.home.join(".run/offload/offload.sock")
    }

    /// `offload serve` for this context, once its socket accepts connections.
    pub async fn host(&self) -> Host {
        self.host_from(self.host_command()).await
    }

    /// The command that starts `offload serve` in this context.
    pub fn host_command(&self) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(target_bin("offload"));
        cmd.arg("serve").kill_on_drop(true);
        self.isolate(&mut cmd);
        cmd
    }

    /// Starts `cmd` (an `offload serve` or the app) and waits until its socket accepts.
    pub async fn host_from(&self, mut cmd: tokio::process::Command) -> Host {
        let child = cmd
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("spawn offload serve");
        let socket = self.socket();
        for _ in 0..400 {
            if tokio::net::UnixStream::connect(&socket).await.is_ok() {
                return Host { child, socket };
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!(
            "offload serve did not listen at {} within 10 s:\n{}",
            socket.display(),
            self.log()
        );
    }

    /// `offload serve --http ADDR` (with `extra` arguments) and the URL it serves MCP at, once
    /// it listens (ADDR may use port 0: the URL is read from its log).
    pub async fn http_host(&self, addr: &str, extra: &[&str]) -> (Host, String) {
        self.http_host_from(self.host_command(), addr, extra).await
    }

    /// [`TestContext::http_host`] from `cmd` (a [`TestContext::host_command`] with more set, an
    /// environment variable say).
    pub async fn http_host_from(
        &self,
        mut cmd: tokio::process::Command,
        addr: &str,
        extra: &[&str],
    ) -> (Host, String) {
        cmd.args(["--http", addr]).args(extra);
        let before = self.log().len();
        let child = cmd
            .stdin(std::process::Stdio::null())
            .spawn()
            .expect("spawn offload serve --http");
        for _ in 0..400 {
            if let Some(url) = self.log()[before..]
                .lines()
                .rev()
                .find_map(|l| l.split("serving MCP at ").nth(1))
            {
                return (
                    Host {
                        child,
                        socket: self.socket(),
                    },
                    url.trim().to_owned(),
                );
            }
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
        panic!(
            "offload serve --http did not listen within 10 s:\n{}",
            self.log()
        );
    }

    /// Runs `offload ARGS` (a human command) in this context and waits for it.
    pub fn run_offload(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = std::process::Command::new(target_bin("offload"));
        cmd.args(args);
        self.isolate_std(&mut cmd);
        cmd.output().expect("run offload")
    }

    /// `offload token create NAME --scope SCOPES` in this context: the token it printed.
    pub fn token(&self, name: &str, scopes: &str) -> String {
        let out = self.run_offload(&["token", "create", name, "--scope", scopes]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout)
            .expect("utf-8")
            .trim()
            .to_owned()
    }

    /// Offload's log so far (for assertion messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log_path).unwrap_or_default()
    }
}

/// A running `offload serve` (killed when dropped).
pub struct Host {
    pub child: tokio::process::Child,
    pub socket: PathBuf,
}

/// A name no other call in this process made.
fn next_number() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
