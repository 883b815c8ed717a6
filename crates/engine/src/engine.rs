//! The engine: configuration turned into roots, limits and an upstream pool, served as MCP.
//!
//! One engine serves any number of client sessions (one per stdio or socket connection); they
//! share the pool, so every client sees the same kept-open upstream connections.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::config::{
    AppDirs, CompatInputs, Config, ConfigError, Limits, SecretSource, apply_compat,
};
use crate::events::Events;
use crate::roots::Roots;
use crate::sessions::Sessions;
use crate::store::Store;
use crate::upstream::{Pool, PoolChange};
use offload_formats::files::{self, Inspector};

pub struct Engine {
    roots: ArcSwap<Roots>,
    limits: ArcSwap<Limits>,
    url_rules: ArcSwap<crate::urls::Rules>,
    /// URLs fetched in the last minutes, and where their bodies are.
    pub(crate) downloads: crate::urls::Downloads,
    pub(crate) pool: Pool,
    pub(crate) store: Store,
    pub(crate) events: Events,
    /// The file tools (`get_file_schema`, `summarize_file`, `read_file`) and their line indexes.
    pub(crate) files: Inspector,
    /// `query_file`'s SQL (its runtime is made on the first query).
    pub(crate) queries: offload_query::Querier,
    /// Columnar copies of the files queried (`<data>/columns`).
    pub(crate) columns: Arc<crate::columns::ColumnCopies>,
    /// The client sessions being served.
    pub(crate) sessions: Sessions,
    /// Pinned upstream tool definitions (`pins.json`, shared by every Offload process).
    pub(crate) pins: crate::gateway::Pins,
    /// Where the upstream prompts and resources clients see lead.
    pub(crate) routes: crate::gateway::Routes,
    /// Calls waiting for a 2026-07-28 client's answers to their upstream's questions.
    pub(crate) rounds: crate::rounds::Rounds,
    /// Which replica holds a parked call, for replicas sharing state.
    pub(crate) replicas: crate::replicas::Replicas,
    /// The confined processes `run_script` runs scripts in.
    pub(crate) scripts: crate::scripts::Workers,
    pub(crate) dirs: AppDirs,
    /// Where `${keyring:}` values are read from and the app saves them.
    pub(crate) secrets: Arc<dyn SecretSource>,
    /// The configuration file and compatibility inputs; `None` for an engine built from a
    /// configuration value.
    source: Option<Source>,
    /// The configuration in effect, and why the file on disk is not (when it does not parse).
    config: Mutex<(Arc<Config>, Option<String>)>,
    paused: AtomicBool,
    /// Bumped whenever the configuration in effect, its error, or the pause changes.
    changed: watch::Sender<u64>,
    /// Held from reading the configuration file to putting it in effect, so that of two
    /// reloads at once (a change made in the app and the file watcher's) the one that reads the
    /// newer file is put in effect last.
    reloading: tokio::sync::Mutex<()>,
}

/// Where the engine's configuration comes from.
pub struct EngineOptions {
    /// The config file (`--config` / `OFFLOAD_CONFIG`); the platform's otherwise.
    pub config_path: Option<PathBuf>,
    /// The person named the file (`offload mcp --config`): a missing or empty one is an
    /// error rather than an empty configuration.
    pub require_config: bool,
    pub compat: CompatInputs,
    pub secrets: Arc<dyn SecretSource>,
    /// Where data and the socket live; the platform's directories when `None`.
    pub dirs: Option<AppDirs>,
}

impl EngineOptions {
    /// The configuration file `config_path`, Offload's own files below `base`
    /// ([`AppDirs::under`]), nothing required, no compatibility inputs: an engine that touches
    /// nothing of the person's (tests, a portable set-up).
    pub fn under(
        base: &std::path::Path,
        config_path: PathBuf,
        secrets: Arc<dyn SecretSource>,
    ) -> Self {
        Self {
            config_path: Some(config_path),
            require_config: false,
            compat: CompatInputs::default(),
            secrets,
            dirs: Some(AppDirs::under(base)),
        }
    }
}

/// The configuration's origin, read again on every reload.
#[derive(Debug, Clone)]
struct Source {
    path: PathBuf,
    compat: CompatInputs,
    required: bool,
}

/// What a reload changed.
#[derive(Debug, Default)]
pub struct Reloaded {
    pub servers: PoolChange,
    /// Roots that were ignored, servers that were skipped.
    pub warnings: Vec<String>,
}

impl Engine {
    /// Loads the configuration and builds the engine. Returns warnings worth logging (ignored
    /// roots, skipped imported servers). Upstream servers are not started here: they start on
    /// first use.
    pub fn load(options: EngineOptions) -> Result<(Self, Vec<String>), ConfigError> {
        let dirs = match options.dirs {
            Some(dirs) => dirs,
            None => AppDirs::platform().ok_or_else(|| ConfigError::Server {
                server: String::new(),
                message: "cannot determine the home directory".into(),
            })?,
        };
        let source = Source {
            path: options
                .config_path
                .clone()
                .unwrap_or_else(|| dirs.config_file()),
            compat: options.compat,
            required: options.require_config && options.config_path.is_some(),
        };
        // Servers that were there before confinement keep their network (once per file).
        let upgraded = crate::config::edit::upgrade_for_sandbox(&source.path, &dirs.data_dir);
        let (config, mut warnings) = source.read(false)?;
        match upgraded {
            Ok(names) if !names.is_empty() => warnings.push(format!(
                "servers are now confined to your allowed directories; {} kept network access (\"sandbox\": {{\"network\": \"all\"}} in their entries): close it where they do not need it",
                names.join(", ")
            )),
            Ok(_) => {}
            Err(e) => tracing::warn!("servers not upgraded for confinement yet: {e}"),
        }
        let (mut engine, more) = Self::from_config(&config, &dirs, options.secrets);
        warnings.extend(more);
        engine.source = Some(source);
        // Its own configuration file is among what no server may touch.
        engine
            .pool
            .set_confinement(engine.confinement(&engine.roots()));
        Ok((engine, warnings))
    }

    /// An engine for `config` with no file behind it (reloads keep it as it is).
    pub fn from_config(
        config: &Config,
        dirs: &AppDirs,
        secrets: Arc<dyn SecretSource>,
    ) -> (Self, Vec<String>) {
        crate::crypto::install_crypto_provider();
        let (roots, mut warnings) =
            Roots::from_entries_with(&config.roots, &dirs.default_root(), &*secrets);
        let (store, more) = Store::open(&dirs.data_dir, &roots);
        warnings.extend(more);
        let (url_rules, more) = crate::urls::Rules::new(&config.urls);
        warnings.extend(more);
        let offered = upstream_roots(&roots);
        let engine = Self {
            roots: ArcSwap::from_pointee(roots),
            pool: Pool::new(
                &config.mcp_servers,
                secrets.clone(),
                config.limits.max_upstream_answer_bytes,
            ),
            limits: ArcSwap::from_pointee(config.limits.clone()),
            url_rules: ArcSwap::from_pointee(url_rules),
            downloads: Default::default(),
            store,
            events: Events::new(Some(&dirs.data_dir), 10 * 1024 * 1024),
            queries: offload_query::Querier::new(),
            columns: Arc::new(crate::columns::ColumnCopies::new(&dirs.data_dir)),
            files: Inspector::new(files::Settings {
                pdf_helper: offload_program(),
                ..files::Settings::default()
            }),
            sessions: Sessions::default(),
            pins: crate::gateway::Pins::at(
                &dirs.data_dir,
                crate::objects::state_bucket(config.http.as_ref(), &*secrets),
            ),
            routes: crate::gateway::Routes::default(),
            rounds: crate::rounds::Rounds::default(),
            replicas: crate::replicas::Replicas::default(),
            scripts: crate::scripts::Workers::new(script_worker_program()),
            dirs: dirs.clone(),
            secrets,
            source: None,
            config: Mutex::new((Arc::new(config.clone()), None)),
            paused: AtomicBool::new(false),
            changed: watch::channel(0).0,
            reloading: tokio::sync::Mutex::new(()),
        };
        engine.note_entries(&config.mcp_servers);
        engine.pool.set_roots(offered);
        engine.pool.remember_in(dirs.data_dir.join("catalog.json"));
        crate::sentences::remember_in(dirs.data_dir.join("search-vectors.bin"));
        engine
            .pool
            .set_confinement(engine.confinement(&engine.roots()));
        (engine, warnings)
    }

    /// A server whose entry the user changed (its command, arguments, environment, sandbox) —
    /// while Offload runs, or while it did not — is pinned afresh at its next listing: what it
    /// shows may follow from the change (a server unconfined describes more folders), and the
    /// user made it.
    fn note_entries(&self, servers: &[(String, crate::config::ServerEntry)]) {
        for (name, entry) in servers {
            if let Ok(entry) = serde_json::to_value(entry.connection()) {
                self.pins.entry_is(name, &entry);
            }
        }
    }

    /// The upstream servers.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// The files stored for clients.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The client sessions being served.
    pub fn sessions(&self) -> &Sessions {
        &self.sessions
    }

    /// Where the configuration, the data and the socket live.
    pub fn dirs(&self) -> &AppDirs {
        &self.dirs
    }

    /// The allowed directories in effect (a snapshot).
    pub fn roots(&self) -> Arc<Roots> {
        self.roots.load_full()
    }

    /// The size limits in effect (a snapshot).
    pub fn limits(&self) -> Arc<Limits> {
        self.limits.load_full()
    }

    /// The URLs the file tools may fetch, and how (a snapshot).
    pub fn url_rules(&self) -> Arc<crate::urls::Rules> {
        self.url_rules.load_full()
    }

    /// The configuration file, when the engine was loaded from one.
    pub fn config_path(&self) -> Option<&std::path::Path> {
        self.source.as_ref().map(|s| s.path.as_path())
    }

    /// The configuration in effect (compatibility inputs applied), shared: asking for it on
    /// every call costs a reference count, not a copy.
    pub fn config(&self) -> Arc<Config> {
        self.lock_config().0.clone()
    }

    /// Why the file on disk is not in effect, when its last reading failed.
    pub fn config_error(&self) -> Option<String> {
        self.lock_config().1.clone()
    }

    fn lock_config(&self) -> std::sync::MutexGuard<'_, (Arc<Config>, Option<String>)> {
        self.config.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Reads the configuration file again and applies it. When the file does not parse, the
    /// configuration in effect stays, and the error is kept for the app to show.
    pub async fn reload(&self) -> Result<Reloaded, ConfigError> {
        let Some(source) = &self.source else {
            return Ok(Reloaded::default());
        };
        let _one_at_a_time = self.reloading.lock().await;
        match source.read(true) {
            Ok((config, warnings)) => {
                let mut reloaded = self.apply(config).await;
                reloaded.warnings.splice(0..0, warnings);
                Ok(reloaded)
            }
            Err(e) => {
                tracing::warn!("configuration not reloaded: {e}");
                self.lock_config().1 = Some(e.to_string());
                self.changed.send_modify(|n| *n += 1);
                Err(e)
            }
        }
    }

    /// Puts `config` in effect: roots and limits at once for the next call, upstream servers
    /// started, stopped or restarted only where their entry changed.
    pub async fn apply(&self, config: Config) -> Reloaded {
        let (roots, mut warnings) =
            Roots::from_entries_with(&config.roots, &self.dirs.default_root(), &*self.secrets);
        self.pool.set_roots(upstream_roots(&roots));
        self.pool.set_confinement(self.confinement(&roots));
        self.roots.store(Arc::new(roots));
        self.limits.store(Arc::new(config.limits.clone()));
        let (url_rules, more) = crate::urls::Rules::new(&config.urls);
        warnings.extend(more);
        self.url_rules.store(Arc::new(url_rules));
        let servers = self
            .pool
            .apply(&config.mcp_servers, config.limits.max_upstream_answer_bytes)
            .await;
        self.note_entries(&config.mcp_servers);
        *self.lock_config() = (Arc::new(config), None);
        self.changed.send_modify(|n| *n += 1);
        Reloaded { servers, warnings }
    }

    /// How confined servers start: through the `offload` launcher, with the roots, each in a
    /// state directory of its own, and never near Offload's own files.
    fn confinement(&self, roots: &Roots) -> crate::upstream::ConfineSetting {
        let mut own = vec![self.dirs.config_dir.clone(), self.dirs.data_dir.clone()];
        own.extend(self.dirs.runtime_dir.clone());
        own.extend(self.config_path().map(ToOwned::to_owned));
        own.extend(std::env::var_os("OFFLOAD_LOG_FILE").map(PathBuf::from));
        crate::upstream::ConfineSetting {
            launcher: launcher_program(),
            roots: roots
                .list()
                .iter()
                .map(|r| (r.path.clone(), !r.writable))
                .collect(),
            state_root: self.dirs.data_dir.join("servers"),
            own,
            home: directories::BaseDirs::new().map(|d| d.home_dir().to_owned()),
        }
    }

    /// Pauses or resumes proxying: while paused, upstream tools are not called (file tools and
    /// discovery still answer).
    pub fn set_paused(&self, paused: bool) {
        if self.paused.swap(paused, Ordering::SeqCst) != paused {
            tracing::info!(
                paused,
                "proxying {}",
                if paused { "paused" } else { "resumed" }
            );
            self.changed.send_modify(|n| *n += 1);
        }
    }

    pub fn is_paused(&self) -> bool {
        self.paused.load(Ordering::SeqCst)
    }

    /// Tells watchers that something they show changed (a server's retry schedule, say).
    pub fn notify(&self) {
        self.changed.send_modify(|n| *n += 1);
    }

    /// For a long-running process: what replicas share (`http.state`) is checked for a newer
    /// version on tasks of their own, and sessions are told when tools were approved elsewhere.
    /// Must run inside a runtime.
    pub fn keep_shared_state_fresh(self: &Arc<Self>) {
        let state = crate::objects::state_bucket(self.config().http.as_ref(), &*self.secrets);
        if let Some(Ok(bucket)) = state {
            crate::shared_audit::ship(&self.events, bucket);
        }
        let engine = Arc::downgrade(self);
        self.pins
            .keep_fresh(move || engine.upgrade().map(|e| e.notify()).is_some());
    }

    /// Wakes whenever the configuration in effect, its error, or the pause changes.
    pub fn watch(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Stops every upstream server (and their children).
    pub async fn shutdown(&self) {
        self.pool.shutdown().await;
    }
}

impl Source {
    /// On a reload, a file that is there but empty is one being written (an editor or a script
    /// that truncates before it writes), never "no servers": it is an error, so the configuration
    /// in effect stays until the write's own event reads the file again.
    fn read(&self, reloading: bool) -> Result<(Config, Vec<String>), ConfigError> {
        let required = self.required || (reloading && self.path.exists());
        let mut config = Config::read(&self.path, required)?;
        let warnings = apply_compat(&mut config, &self.compat)?;
        Ok((config, warnings))
    }
}

/// The `offload` program that extracts PDF text in a child process and confines servers, and
/// beside which the script worker is installed: this program when it is `offload` (the shim and
/// the CLI), the `offload` installed beside it (the desktop app's sidecar), or the one named by
/// `OFFLOAD_HELPER`. Without one, PDF extraction runs in-process, checked page by page, and
/// confined servers and scripts do not start.
fn offload_program() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("OFFLOAD_HELPER") {
        return Some(PathBuf::from(path));
    }
    let exe = std::env::current_exe().ok()?;
    if exe.file_stem().is_some_and(|s| s == "offload") {
        return Some(exe);
    }
    let name = format!("offload{}", std::env::consts::EXE_SUFFIX);
    let sidecar = exe.with_file_name(&name);
    if sidecar.is_file() {
        return Some(sidecar);
    }
    // A test binary in cargo's `deps` directory: the `offload` built beside it.
    let dir = exe.parent()?;
    let built = dir.parent()?.join(&name);
    (dir.file_name().is_some_and(|d| d == "deps") && built.is_file()).then_some(built)
}

/// The launcher of confined servers (`sandbox-exec`): the script worker beside the `offload`
/// program (a small program, quick to start), or `offload` itself without it.
fn launcher_program() -> Option<PathBuf> {
    script_worker_program().or_else(offload_program)
}

/// The program scripts run in, `offload-script-worker`, installed beside the `offload` program.
fn script_worker_program() -> Option<PathBuf> {
    let name = format!("offload-script-worker{}", std::env::consts::EXE_SUFFIX);
    let worker = offload_program()?.with_file_name(name);
    worker.is_file().then_some(worker)
}

/// The local allowed directories as MCP roots (`file://` URIs), what upstreams' `roots/list`
/// gets. (Roots are deprecated by 2026-07-28, SEP-2577; servers on older revisions ask.)
#[allow(deprecated)]
fn upstream_roots(roots: &Roots) -> Vec<rmcp::model::Root> {
    roots
        .list()
        .iter()
        .filter_map(|root| {
            let uri = url::Url::from_file_path(&root.path).ok()?;
            let mut offered = rmcp::model::Root::new(uri.to_string());
            offered.name = root
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned());
            Some(offered)
        })
        .collect()
}
