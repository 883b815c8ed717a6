//! Where Offload keeps its files on each platform, and `~` expansion.

use std::path::{Path, PathBuf};

/// The platform directories Offload uses (`directories` crate).
#[derive(Debug, Clone)]
pub struct AppDirs {
    /// Holds `config.json`.
    pub config_dir: PathBuf,
    /// Holds the default root, records and the audit log.
    pub data_dir: PathBuf,
    /// Per-login scratch space for the app's socket (`$XDG_RUNTIME_DIR/offload`), when the
    /// platform has one.
    pub runtime_dir: Option<PathBuf>,
}

impl AppDirs {
    /// The platform's directories for Offload, e.g. `~/.config/offload` and
    /// `~/.local/share/offload` on Linux.
    pub fn platform() -> Option<Self> {
        let dirs = directories::ProjectDirs::from("", "", "offload")?;
        Some(Self {
            config_dir: dirs.config_dir().to_owned(),
            data_dir: dirs.data_dir().to_owned(),
            runtime_dir: dirs.runtime_dir().map(ToOwned::to_owned),
        })
    }

    /// Everything below one directory (tests, portable set-ups): `config/`, `data/`, `run/`.
    pub fn under(base: &Path) -> Self {
        Self {
            config_dir: base.join("config"),
            data_dir: base.join("data"),
            runtime_dir: Some(base.join("run")),
        }
    }

    pub fn config_file(&self) -> PathBuf {
        self.config_dir.join("config.json")
    }

    /// The root Offload creates when the user configured none.
    pub fn default_root(&self) -> PathBuf {
        self.data_dir.join("files")
    }
}

/// Expands a leading `~` or `~/` to the home directory; other paths are returned as they are.
pub fn expand_tilde(path: &str) -> PathBuf {
    let home = || directories::BaseDirs::new().map(|d| d.home_dir().to_owned());
    if path == "~" {
        if let Some(h) = home() {
            return h;
        }
    } else if let Some(rest) = path.strip_prefix("~/").or_else(|| path.strip_prefix("~\\"))
        && let Some(h) = home()
    {
        return h.join(rest);
    }
    Path::new(path).to_owned()
}
