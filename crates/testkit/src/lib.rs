//! Test helpers shared by Offload's integration tests and benchmarks: locating the built
//! binaries, a [`TestContext`] with its own home, config and roots in a temporary directory, and
//! a real rmcp client that launches `offload mcp` over real pipes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ClientConfig, Implementation,
    ProgressNotificationParam,
};
use rmcp::service::{NotificationContext, RunningService, ServiceExt};
use rmcp::transport::TokioChildProcess;
use rmcp::{ClientHandler, RoleClient};
use serde_json::{Value, json};

/// A built binary of this workspace (`offload`, `offload-fixture`), next to the running test or
/// bench executable in the same target directory.
pub mod docs;
pub mod gcs;
pub mod keyring;
pub mod nginx;
pub mod s3;
pub mod wire;

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

/// Makes ring the test process's TLS provider (as the engine does for `offload`): the reqwest
/// clients of tests and benches, and rmcp's, are built without one of their own.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
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

/// Records what a server sends the client on its own.
#[derive(Clone, Default)]
pub struct Recorder {
    pub progress: Arc<Mutex<Vec<ProgressNotificationParam>>>,
    /// How many `notifications/resources/list_changed` arrived.
    pub resource_list_changed: Arc<std::sync::atomic::AtomicUsize>,
    /// How many `notifications/tools/list_changed` arrived.
    pub tool_list_changed: Arc<std::sync::atomic::AtomicUsize>,
}

impl ClientHandler for Recorder {
    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("offload-tests", "0"),
        )
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.lock().unwrap().push(params);
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tool_list_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.resource_list_changed
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }
}

pub type Client = RunningService<RoleClient, Recorder>;

/// Starts `cmd` and completes the MCP handshake with it.
pub async fn connect(cmd: tokio::process::Command) -> Client {
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn MCP server");
    Recorder::default()
        .serve(transport)
        .await
        .expect("MCP handshake")
}

/// Calls `name` with `args` (an object) and returns the result.
pub async fn call(client: &Client, name: &str, args: Value) -> CallToolResult {
    let Value::Object(args) = args else {
        panic!("arguments must be an object")
    };
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = Some(args);
    client
        .call_tool(params)
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `call_tool` of `server`'s `tool`, asked again every 5 s while the answer says the server is
/// still starting (a first start downloading its package outlasts its start timeout), as a
/// model is told to — for at most `within`.
pub async fn call_once_started(
    client: &Client,
    server: &str,
    tool: &str,
    args: &Value,
    within: std::time::Duration,
) -> CallToolResult {
    let started = std::time::Instant::now();
    loop {
        let r = call(
            client,
            "call_tool",
            json!({"server": server, "tool_name": tool, "tool_args": args}),
        )
        .await;
        let said = text(&r);
        let starting = said.contains("did not finish starting") || said.contains("still starting");
        if !starting || started.elapsed() >= within {
            return r;
        }
        tokio::time::sleep(std::time::Duration::from_secs(5)).await;
    }
}

/// A folder served over HTTP on 127.0.0.1 (Python's `http.server`) while it lives: a web page
/// for fetchers.
pub struct ServedDir(std::process::Child);

impl ServedDir {
    pub fn start(dir: &Path, port: u16) -> ServedDir {
        let served = ServedDir(
            std::process::Command::new("python3")
                .args([
                    "-m",
                    "http.server",
                    &port.to_string(),
                    "--bind",
                    "127.0.0.1",
                ])
                .arg("--directory")
                .arg(dir)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .expect("python3 runs"),
        );
        for _ in 0..200 {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return served;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        panic!("python3's http.server did not start on port {port}");
    }
}

impl Drop for ServedDir {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The concatenated text blocks of a result.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The structured content of a result (panics when there is none).
pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}

/// A `read_file` answer as one value, rebuilt from what travels: its numbers from
/// `_meta["dev.offload/page"]`, and from its text block (after the header line) `content`, or
/// for sheets and tables `rows` (a JSON array a line, under a line of column names when the
/// numbers list `columns`). Panics when the answer is not a page.
pub fn page(result: &CallToolResult) -> Value {
    let mut page = result
        .meta
        .as_ref()
        .and_then(|m| m.get("dev.offload/page"))
        .unwrap_or_else(|| panic!("not a page: {result:?}"))
        .clone();
    let text = result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default();
    let body = text.split_once('\n').map_or("", |(_, body)| body);
    match page["kind"].as_str() {
        Some("sheet" | "table") => {
            let mut lines = body.lines();
            if page.get("columns").is_some() {
                lines.next();
            }
            let rows: Vec<Value> = lines
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect();
            page["rows"] = Value::Array(rows);
        }
        Some("image") => {}
        _ => page["content"] = Value::String(body.to_owned()),
    }
    page
}

/// `structuredContent.error.code` of an error result.
pub fn error_code(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error, got {result:?}"
    );
    structured(result)["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The parent of `pid` (Linux: /proc).
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Every process's id (Linux: /proc).
fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// `pid`'s command line, its arguments joined by spaces.
pub fn command_line(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    Some(args.join(" "))
}

/// The processes whose parent is `parent` and whose command line holds `needle` (Linux: /proc).
pub fn children_running(parent: u32, needle: &str) -> Vec<u32> {
    pids()
        .filter(|pid| command_line(*pid).is_some_and(|c| c.contains(needle)))
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// The processes started from `pid`, their children and theirs (Linux: /proc): a confined
/// server's launcher, and the server inside its process namespace, by their pids here.
pub fn descendants(pid: u32) -> Vec<u32> {
    let all: Vec<(u32, Option<u32>)> = pids().map(|p| (p, parent_of(p))).collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            all.iter()
                .filter(|(_, pp)| *pp == Some(parent))
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// The live processes whose command line holds `needle`.
pub fn running_with(needle: &str) -> Vec<u32> {
    pids()
        .filter(|pid| command_line(*pid).is_some_and(|c| c.contains(needle)))
        .filter(|pid| process_alive(*pid))
        .collect()
}

/// The live processes whose command line, its arguments joined by spaces, is `command`.
pub fn running(command: &str) -> Vec<u32> {
    pids()
        .filter(|pid| command_line(*pid).is_some_and(|c| c == command))
        .filter(|pid| process_alive(*pid))
        .collect()
}

/// True when a process with this id exists (Linux: /proc).
pub fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.split(") ")
                    .nth(1)
                    .is_some_and(|rest| rest.starts_with('Z'))
            })
            .unwrap_or(true)
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

/// A name no other call in this process made.
fn next_number() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}
