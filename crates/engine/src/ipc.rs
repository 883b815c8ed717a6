//! The local socket between `offload mcp` and the process that hosts the engine (the desktop
//! app, or `offload serve` where there is no display): a Unix domain socket only its user can
//! use, each connection one MCP session served by the shared engine. The shim side only
//! connects and pumps bytes. Nothing here knows about windows or the tray.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::Engine;
use crate::config::AppDirs;

/// How long the shim waits for a host to accept before it runs an embedded engine.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(500);

/// The socket: `OFFLOAD_SOCKET` when set, else `offload.sock` in the user's runtime directory
/// (`$XDG_RUNTIME_DIR/offload` on Linux), else in Offload's data directory.
pub fn socket_path(dirs: &AppDirs) -> PathBuf {
    if let Some(path) = std::env::var_os("OFFLOAD_SOCKET") {
        return PathBuf::from(path);
    }
    dirs.runtime_dir
        .as_ref()
        .unwrap_or(&dirs.data_dir)
        .join("offload.sock")
}

#[derive(Debug, thiserror::Error)]
pub enum IpcError {
    #[error("another Offload is already serving at {0}; quit it first")]
    InUse(PathBuf),
    #[error("cannot listen at {path}: {source}")]
    Bind {
        path: PathBuf,
        source: std::io::Error,
    },
}

#[cfg(unix)]
mod platform {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};

    use super::{IpcError, Path};

    pub type Stream = tokio::net::UnixStream;
    pub type Listener = tokio::net::UnixListener;

    pub async fn connect(path: &Path) -> std::io::Result<Stream> {
        Stream::connect(path).await
    }

    /// Binds `path` for this user only: the directory is created 0700 and the socket made
    /// 0600. A socket file left by a host that died is replaced; a live one is not.
    pub async fn bind(path: &Path) -> Result<Listener, IpcError> {
        let failed = |source| IpcError::Bind {
            path: path.to_owned(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(failed)?;
        }
        if path.exists() {
            if connect(path).await.is_ok() {
                return Err(IpcError::InUse(path.to_owned()));
            }
            std::fs::remove_file(path).map_err(failed)?;
        }
        let listener = Listener::bind(path).map_err(failed)?;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
        Ok(listener)
    }

    pub async fn accept(listener: &Listener) -> std::io::Result<Stream> {
        listener.accept().await.map(|(stream, _)| stream)
    }
}

#[cfg(windows)]
mod platform {
    //! Named pipes: one server instance per connection, the next created before the
    //! connected one is handed over. (Not exercised by this project's CI, which runs on Linux.)
    use tokio::net::windows::named_pipe::{ClientOptions, NamedPipeServer, ServerOptions};

    use super::{IpcError, Path};

    pub type Stream = tokio::net::windows::named_pipe::NamedPipeClient;

    pub struct Listener {
        name: std::ffi::OsString,
        next: std::sync::Mutex<Option<NamedPipeServer>>,
    }

    fn pipe_name(path: &Path) -> std::ffi::OsString {
        let name: String = path
            .to_string_lossy()
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        format!(r"\\.\pipe\offload-{name}").into()
    }

    pub async fn connect(path: &Path) -> std::io::Result<Stream> {
        ClientOptions::new().open(pipe_name(path))
    }

    pub async fn bind(path: &Path) -> Result<Listener, IpcError> {
        let name = pipe_name(path);
        let first = ServerOptions::new()
            .first_pipe_instance(true)
            .reject_remote_clients(true)
            .create(&name)
            .map_err(|_| IpcError::InUse(path.to_owned()))?;
        Ok(Listener {
            name,
            next: std::sync::Mutex::new(Some(first)),
        })
    }

    pub async fn accept(listener: &Listener) -> std::io::Result<NamedPipeServer> {
        let server = match listener.next.lock().ok().and_then(|mut n| n.take()) {
            Some(server) => server,
            None => ServerOptions::new().create(&listener.name)?,
        };
        server.connect().await?;
        let next = ServerOptions::new().create(&listener.name)?;
        if let Ok(mut slot) = listener.next.lock() {
            *slot = Some(next);
        }
        Ok(server)
    }
}

/// The host's end: a bound socket that serves MCP sessions from the shared engine.
pub struct Host {
    listener: platform::Listener,
    path: PathBuf,
}

impl Host {
    pub async fn bind(path: &Path) -> Result<Self, IpcError> {
        let listener = platform::bind(path).await?;
        tracing::info!(path = %path.display(), "listening for offload mcp");
        Ok(Self {
            listener,
            path: path.to_owned(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Accepts connections until the task is dropped; each is one MCP session of `engine`.
    pub async fn serve(self, engine: Arc<Engine>) {
        loop {
            match platform::accept(&self.listener).await {
                Ok(stream) => {
                    let engine = engine.clone();
                    tokio::spawn(async move {
                        let (read, write) = tokio::io::split(stream);
                        let mut read = tokio::io::BufReader::new(read);
                        let expose = read_preamble(&mut read).await;
                        if let Err(e) = engine.serve_with((read, write), expose).await {
                            tracing::warn!("socket session: {e}");
                        }
                    });
                }
                Err(e) => {
                    // Out of file descriptors and the like: wait rather than spin.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
            }
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        #[cfg(unix)]
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A connection from the shim to the host.
pub type Connection = platform::Stream;

/// The shim's end: a connection to a running host, if one answers within [`CONNECT_TIMEOUT`].
pub async fn connect(path: &Path) -> Option<Connection> {
    tokio::time::timeout(CONNECT_TIMEOUT, platform::connect(path))
        .await
        .ok()?
        .ok()
}

/// Copies bytes both ways between the client's stdio and the host until either side closes.
/// When the client closes stdin, the host is told (write side shut down) and its last answers
/// still reach stdout.
pub async fn pump<S, I, O>(
    stream: S,
    expose: Option<crate::gateway::Expose>,
    mut input: I,
    mut output: O,
) -> std::io::Result<()>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite,
    I: tokio::io::AsyncRead + Unpin,
    O: tokio::io::AsyncWrite + Unpin,
{
    use tokio::io::AsyncWriteExt;
    let (mut from_host, mut to_host) = tokio::io::split(stream);
    if let Some(expose) = expose {
        to_host.write_all(preamble(expose).as_bytes()).await?;
    }
    let upstream = async {
        tokio::io::copy(&mut input, &mut to_host).await?;
        to_host.shutdown().await
    };
    let downstream = async {
        tokio::io::copy(&mut from_host, &mut output).await?;
        output.flush().await
    };
    tokio::pin!(upstream, downstream);
    tokio::select! {
        // The host went away (or the copy failed): nothing more can reach the client.
        r = &mut downstream => r,
        r = &mut upstream => {
            r?;
            // The client is done sending; deliver what the host still answers.
            downstream.await
        }
    }
}

/// The first line a shim may send before the MCP messages: the client's own choices
/// (`offload mcp --expose`). It starts with `#`, which no JSON-RPC message does.
const PREAMBLE: &str = "#offload ";

fn preamble(expose: crate::gateway::Expose) -> String {
    format!("{PREAMBLE}expose={}\n", expose.as_str())
}

/// Reads the shim's preamble when there is one (leaving the MCP messages after it).
async fn read_preamble<R: tokio::io::AsyncRead + Unpin>(
    read: &mut tokio::io::BufReader<R>,
) -> Option<crate::gateway::Expose> {
    use tokio::io::{AsyncBufReadExt, AsyncReadExt};
    let head = read.fill_buf().await.ok()?;
    if !head.starts_with(b"#") {
        return None;
    }
    let mut line = Vec::new();
    (&mut *read)
        .take(512)
        .read_until(b'\n', &mut line)
        .await
        .ok()?;
    let line = String::from_utf8_lossy(&line);
    line.strip_prefix(PREAMBLE)?
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("expose="))
        .and_then(crate::gateway::Expose::parse)
}
