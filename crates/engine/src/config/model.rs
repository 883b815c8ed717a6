//! The shape of `config.json`. Field names follow the MCP clients' `mcpServers` convention.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

use super::ConfigError;
use super::sandbox::{Sandbox, SandboxPolicy};

/// The whole configuration file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Config {
    /// Allowed directories. The first writable one is the default directory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub roots: Vec<RootEntry>,
    /// Upstream servers by name, in the order of the file (`servers`, VS Code's name, too).
    #[serde(
        default,
        rename = "mcpServers",
        alias = "servers",
        with = "ordered_servers"
    )]
    pub mcp_servers: Vec<(String, ServerEntry)>,
    #[serde(default, skip_serializing_if = "Limits::is_default")]
    pub limits: Limits,
    /// How upstream tools are shown to clients (`tools.expose`, `tools.directLimit`).
    #[serde(default, skip_serializing_if = "ToolsConfig::is_default")]
    pub tools: ToolsConfig,
    /// Tool pinning: a changed tool definition is held until the user approves it (default on).
    #[serde(default, rename = "pinTools", skip_serializing_if = "Option::is_none")]
    pub pin_tools: Option<bool>,
    /// Serving over HTTP: accept access tokens from this OAuth authorization server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<HttpConfig>,
    /// URLs the file tools may fetch (`urls.allow`); none unless the user lists them.
    #[serde(default, skip_serializing_if = "UrlsConfig::is_default")]
    pub urls: UrlsConfig,
    /// Desktop notifications from the app for what needs the user (off unless `true`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notifications: Option<bool>,
    /// Keys Offload does not know, kept so that rewriting the file loses nothing.
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Config {
    /// The entry of the server called `name`.
    pub fn server(&self, name: &str) -> Option<&ServerEntry> {
        self.mcp_servers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, e)| e)
    }
}

/// A root: a bare path (read-write) or `{path, writable}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RootEntry {
    Path(String),
    Full {
        path: String,
        #[serde(default = "yes")]
        writable: bool,
        #[serde(flatten)]
        extra: Map<String, Value>,
    },
}

impl RootEntry {
    pub fn path(&self) -> &str {
        match self {
            Self::Path(p) | Self::Full { path: p, .. } => p,
        }
    }
    pub fn writable(&self) -> bool {
        match self {
            Self::Path(_) => true,
            Self::Full { writable, .. } => *writable,
        }
    }
    /// How long the responses Offload stores here are kept (`retention`); none: for good.
    /// A malformed rule keeps everything (nothing is deleted on a guess).
    pub fn retention(&self) -> Option<Retention> {
        self.extra()
            .get("retention")
            .and_then(|v| serde_json::from_value::<Retention>(v.clone()).ok())
            .filter(Retention::is_on)
    }
    /// The entry's other settings (a bucket root's endpoint, region, credentials, retention).
    pub fn extra(&self) -> &Map<String, Value> {
        static NONE: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
        match self {
            Self::Path(_) => NONE.get_or_init(Map::new),
            Self::Full { extra, .. } => extra,
        }
    }
}

fn yes() -> bool {
    true
}

/// A root's retention rule (off unless written): stored responses older than `days` are
/// deleted, and the oldest beyond `maxGb` (of 1024³ bytes) in all. Only files Offload stored are ever deleted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Retention {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub days: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_gb: Option<f64>,
}

/// A gigabyte as the app shows sizes (1024³ bytes).
const GIB: f64 = 1024.0 * 1024.0 * 1024.0;

impl Retention {
    pub fn is_on(&self) -> bool {
        self.days.is_some_and(|d| d > 0) || self.max_gb.is_some_and(|g| g > 0.0 && g.is_finite())
    }
    /// The byte budget, if any.
    pub fn max_bytes(&self) -> Option<u64> {
        self.max_gb
            .filter(|g| *g > 0.0 && g.is_finite())
            .map(|g| (g * GIB) as u64)
    }
}

/// One upstream server, stdio or remote, exactly as MCP clients write it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerEntry {
    /// `stdio` (default when `command` is set), `http` / `streamable-http` / `streamableHttp`.
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
    /// How long a call may go without an answer or a progress notification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_secs: Option<u64>,
    /// How long starting the server (process start and handshake) may take.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_timeout_secs: Option<u64>,
    /// `false` keeps the server's tools behind `call_tool` even in direct mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expose: Option<bool>,
    /// How its tools are named in direct mode: a string, or `false` for their own names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<Value>,
    /// Tools hidden everywhere (listing and calling).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub disabled_tools: Vec<String>,
    /// When set, only these tools are used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled_tools: Option<Vec<String>>,
    /// The protocol revision Offload speaks with it: `"2025-11-25"` (the default: the
    /// `initialize` handshake, which every server knows), `"2026-07-28"` (stateless, with
    /// `server/discover`) or `"auto"` (asks with `server/discover`, falls back to `initialize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol: Option<String>,
    /// What the server's `roots/list` gets: `"offload"` (the default: Offload's allowed
    /// directories) or `"none"` (Offload does not offer roots to it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<String>,
    /// Sign-in settings for an OAuth server that needs a pre-registered client, a client ID
    /// metadata document, or given scopes (others need none: a 401 challenge is enough).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth: Option<OAuthConfig>,
    /// How a stdio server is confined: `"off"`, or what it may touch beyond the defaults.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Sandbox>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `"http"`: serving over HTTP from the app, and OAuth resource-server mode.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpConfig {
    /// Where the app serves MCP over HTTP (`127.0.0.1:8765`); absent: it does not. (`offload
    /// serve` takes `--http` instead.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub listen: Option<String>,
    /// The authorization server whose JWT access tokens are accepted (its `issuer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// This Offload's resource URL as tokens name it in `aud` (e.g. `https://offload.example.com/mcp`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<String>,
    /// Where replicas on several machines keep what they share (access tokens): a bucket
    /// prefix, with the settings a bucket root takes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<StateEntry>,
    /// This replica's MCP URL as the other replicas reach it (`http://${env:POD_IP}:8765/mcp`),
    /// to hand it retries of the calls it parked; default: the address it serves at, unless
    /// that is a wildcard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub advertise: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `http.state`: `{"path": "s3://bucket/prefix", "endpoint": …, "region": …, "accessKeyId": …}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateEntry {
    pub path: String,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// `"oauth"` of a remote server entry.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OAuthConfig {
    /// A client registered with the authorization server out of band.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_id: Option<String>,
    /// Its secret, as a `${keyring:NAME}` reference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// Scopes to ask for (otherwise the server's challenge or metadata decides).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scopes: Vec<String>,
    /// The HTTPS URL of a client ID metadata document describing Offload.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
}

/// How to reach an upstream server.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
        cwd: Option<String>,
        /// How it is confined (the defaults when the entry says nothing; see `upstream::confine`).
        sandbox: Sandbox,
    },
    Http {
        url: String,
        headers: BTreeMap<String, String>,
        oauth: Option<OAuthConfig>,
    },
}

impl Transport {
    /// Whether connections sign in with OAuth: remote servers do, unless their `headers` carry
    /// a static `Authorization`.
    pub fn signs_in(&self) -> bool {
        match self {
            Self::Stdio { .. } => false,
            Self::Http { headers, .. } => !headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization")),
        }
    }
}

/// `tools` in the configuration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ToolsConfig {
    pub expose: Expose,
    pub direct_limit: usize,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for ToolsConfig {
    fn default() -> Self {
        Self {
            expose: Expose::Auto,
            direct_limit: 40,
            extra: Map::new(),
        }
    }
}

impl ToolsConfig {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

impl ServerEntry {
    pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

    /// The entry without what only decides how its tools are shown: two entries that differ
    /// only there share one running server.
    pub fn connection(&self) -> Self {
        Self {
            expose: None,
            prefix: None,
            disabled_tools: Vec::new(),
            enabled_tools: None,
            ..self.clone()
        }
    }

    /// How the connection starts, from `protocol`.
    pub fn lifecycle(&self) -> rmcp::service::ClientLifecycleMode {
        use rmcp::model::ProtocolVersion;
        use rmcp::service::ClientLifecycleMode;
        match self.protocol.as_deref() {
            Some("2026-07-28") => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            Some("auto") => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: None,
            },
            _ => ClientLifecycleMode::Initialize,
        }
    }

    /// Whether the server is offered Offload's allowed directories as its roots.
    pub fn offers_roots(&self) -> bool {
        self.roots.as_deref() != Some("none")
    }

    /// How its tools are named in direct mode.
    pub fn tool_prefix(&self) -> Prefix {
        match &self.prefix {
            Some(Value::Bool(false)) => Prefix::None,
            Some(Value::String(p)) if !p.trim().is_empty() => Prefix::Custom(p.trim().to_owned()),
            _ => Prefix::Server,
        }
    }
    pub const DEFAULT_START_TIMEOUT_SECS: u64 = 60;

    /// How long a call may go without an answer or progress (`timeoutSecs`).
    pub fn timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.timeout_secs
                .filter(|s| *s > 0)
                .unwrap_or(Self::DEFAULT_TIMEOUT_SECS),
        )
    }

    /// How long a start may take (`startTimeoutSecs`).
    pub fn start_timeout(&self) -> std::time::Duration {
        std::time::Duration::from_secs(
            self.start_timeout_secs
                .filter(|s| *s > 0)
                .unwrap_or(Self::DEFAULT_START_TIMEOUT_SECS),
        )
    }

    /// The URL of a remote entry; also accepts Windsurf's `serverUrl` and Gemini's `httpUrl`.
    fn remote_url(&self) -> Option<String> {
        self.url.clone().or_else(|| {
            ["serverUrl", "httpUrl"]
                .iter()
                .find_map(|k| self.extra.get(*k)?.as_str().map(str::to_owned))
        })
    }

    /// Decides the transport, or says what is wrong with the entry.
    pub fn transport(&self, name: &str) -> Result<Transport, ConfigError> {
        let err = |message: &str| ConfigError::Server {
            server: name.to_owned(),
            message: message.to_owned(),
        };
        let kind = self.kind.as_deref().map(str::to_ascii_lowercase);
        match kind.as_deref() {
            None | Some("stdio") | Some("local") if self.command.is_some() => {
                Ok(Transport::Stdio {
                    command: self.command.clone().unwrap_or_default(),
                    args: self.args.clone(),
                    env: self.env.clone(),
                    cwd: self.cwd.clone(),
                    // Confined unless the entry says "off": the defaults when it says nothing.
                    sandbox: self
                        .sandbox
                        .clone()
                        .unwrap_or_else(|| Sandbox::Confined(SandboxPolicy::default())),
                })
            }
            Some("stdio") | Some("local") => Err(err("a stdio server needs a \"command\"")),
            None | Some("http") | Some("streamable-http") | Some("streamablehttp") => {
                match self.remote_url() {
                    Some(url) => Ok(Transport::Http {
                        url,
                        headers: self.headers.clone(),
                        oauth: self.oauth.clone(),
                    }),
                    None => Err(err("give either \"command\" (stdio) or \"url\" (HTTP)")),
                }
            }
            Some("sse") => Err(err(
                "the legacy SSE transport is not supported; use the server's streamable HTTP endpoint (\"type\": \"http\")",
            )),
            Some(other) => Err(err(&format!(
                "unknown \"type\": \"{other}\" (use \"stdio\" or \"http\")"
            ))),
        }
    }
}

/// Size limits. Defaults follow the contract; the model cannot change them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Limits {
    pub max_input_bytes: u64,
    pub max_upstream_message_bytes: u64,
    pub inline_bytes: u64,
    /// The largest single answer accepted from an upstream (default 256 MiB).
    pub max_upstream_answer_bytes: u64,
    /// Memory one `query_file` query may hold before it spills to disk (default 256 MiB).
    pub query_memory_bytes: u64,
    /// Disk the columnar copies of queried files may take (default 2 GiB; 0: no copies).
    pub query_cache_bytes: u64,
    /// A script's deadline when `run_script` names none (default 30 s)...
    pub script_timeout_ms: u64,
    /// ...and the longest it may name (default 5 minutes).
    pub max_script_timeout_ms: u64,
    /// A script's JavaScript heap (default 64 MiB).
    pub script_memory_bytes: u64,
    /// Tool calls one script may make (default 200).
    pub script_calls: u64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_input_bytes: 10 * 1024 * 1024,
            max_upstream_message_bytes: 8 * 1024 * 1024,
            inline_bytes: 16 * 1024,
            max_upstream_answer_bytes: 256 * 1024 * 1024,
            query_memory_bytes: 256 * 1024 * 1024,
            query_cache_bytes: 2 * 1024 * 1024 * 1024,
            script_timeout_ms: 30_000,
            max_script_timeout_ms: 300_000,
            script_memory_bytes: 64 * 1024 * 1024,
            script_calls: 200,
            extra: Map::new(),
        }
    }
}

impl Limits {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// `"urls"`: what the file tools may fetch. Deny by default: no pattern, no fetch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UrlsConfig {
    /// URL patterns (`https://data.example.com/*`): `*` matches any characters, everything
    /// else is literal; a pattern without a path allows the whole host. Private, loopback and
    /// link-local addresses are reached only through a pattern that names its host without `*`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<String>,
    /// The largest body fetched (default 1 GiB).
    pub max_bytes: u64,
    /// The whole fetch, from connecting to the last byte (default 120 s).
    pub timeout_secs: u64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Default for UrlsConfig {
    fn default() -> Self {
        Self {
            allow: Vec::new(),
            max_bytes: 1024 * 1024 * 1024,
            timeout_secs: 120,
            extra: Map::new(),
        }
    }
}

impl UrlsConfig {
    fn is_default(&self) -> bool {
        *self == Self::default()
    }
}

/// `mcpServers` is an object whose key order matters to people (it is the order they see).
mod ordered_servers {
    use super::ServerEntry;
    use serde::de::{MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(
        servers: &[(String, ServerEntry)],
        s: S,
    ) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(servers.len()))?;
        for (name, entry) in servers {
            map.serialize_entry(name, entry)?;
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Vec<(String, ServerEntry)>, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Vec<(String, ServerEntry)>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of servers by name")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                let mut out: Vec<(String, ServerEntry)> = Vec::new();
                while let Some((name, entry)) = m.next_entry::<String, ServerEntry>()? {
                    match out.iter_mut().find(|(n, _)| *n == name) {
                        Some(slot) => slot.1 = entry, // JSON semantics: the last one wins
                        None => out.push((name, entry)),
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(V)
    }
}

/// `tools.expose` in the configuration, or `offload mcp --expose`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Expose {
    #[default]
    Auto,
    Direct,
    Meta,
}

impl Expose {
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "auto" => Some(Self::Auto),
            "direct" => Some(Self::Direct),
            "meta" => Some(Self::Meta),
            _ => None,
        }
    }

    /// The name `parse` reads (and the configuration uses).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Direct => "direct",
            Self::Meta => "meta",
        }
    }
}

/// How a server's tools are named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prefix {
    /// `<server>__<tool>` (the default).
    Server,
    /// `<prefix>__<tool>`.
    Custom(String),
    /// The tool's own name: a transparent proxy for that server.
    None,
}
