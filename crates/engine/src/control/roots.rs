//! Allowed directories as the app's Directories screen shows and edits them. The user picks
//! them (through the native folder picker); the model never can.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::edit::{ControlError, edit_config};
use super::secrets;
use crate::config::{NoKeychain, Retention, RootEntry, edit, expand_tilde};
use crate::objects::{Bucket, ObjectUrl, is_object_url};
use crate::{Engine, ErrorCode};

/// One allowed directory.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RootView {
    /// As written in `config.json` (or the built-in default directory's path).
    pub path: String,
    /// The directory it resolves to, when it is usable.
    pub resolved: Option<String>,
    pub writable: bool,
    /// Where stored responses go when no `storage_path` is given.
    pub default: bool,
    /// False for the built-in directory used while none is configured.
    pub configured: bool,
    /// Why the directory is not in use (missing, not a directory, ...).
    pub problem: Option<String>,
    /// Files Offload stored inside it (responses and the files beside them), and their size:
    /// what the Responses screen lists as stored for it.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub files: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    /// Other files the Responses screen lists for it (inputs, files put there by hand).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub others: u64,
    /// Its retention rule, if the user set one (off by default).
    pub retention: Option<Retention>,
}

fn canonical(path: &str) -> Option<PathBuf> {
    std::fs::canonicalize(expand_tilde(path)).ok()
}

pub fn roots(engine: &Engine) -> Vec<RootView> {
    let effective = engine.roots();
    let default = effective.default_dir().map(Path::to_owned);
    // Counted from what the Responses screen lists, so that the two screens agree.
    let listed = super::responses::responses(engine).items;
    let count = |root: &str| {
        listed
            .iter()
            .filter(|r| r.root == root)
            .fold((0, 0, 0), |(n, b, o), r| {
                if r.stored {
                    (n + 1, b + r.bytes, o)
                } else {
                    (n, b, o + 1)
                }
            })
    };
    let config = engine.config();
    let retention_of = |path: &str| {
        config
            .roots
            .iter()
            .find(|e| e.path() == path)
            .and_then(RootEntry::retention)
    };
    let view = |path: String, resolved: Option<PathBuf>, writable, configured, problem| {
        let (files, bytes, others) = resolved
            .as_deref()
            .map_or((0, 0, 0), |r| count(&r.display().to_string()));
        RootView {
            retention: retention_of(&path),
            others,
            default: resolved.is_some() && resolved == default,
            resolved: resolved.map(|r| r.display().to_string()),
            path,
            writable,
            configured,
            problem,
            files,
            bytes,
        }
    };
    let configured = engine.config().roots.clone();
    if configured.is_empty() {
        return effective
            .list()
            .iter()
            .map(|r| {
                let p = r.path.display().to_string();
                view(p, Some(r.path.clone()), r.writable, false, None)
            })
            .collect();
    }
    configured
        .iter()
        .map(|entry| {
            if is_object_url(entry.path()) {
                return bucket_view(&effective, entry, &count);
            }
            let resolved =
                canonical(entry.path()).filter(|c| effective.list().iter().any(|r| &r.path == c));
            let problem =
                resolved
                    .is_none()
                    .then(|| match std::fs::metadata(expand_tilde(entry.path())) {
                        Err(e) => format!("cannot be used: {e}"),
                        Ok(m) if !m.is_dir() => "is not a directory".to_owned(),
                        Ok(_) => "is listed twice".to_owned(),
                    });
            view(
                entry.path().to_owned(),
                resolved,
                entry.writable(),
                true,
                problem,
            )
        })
        .collect()
}

/// A configured bucket root: in use, or why not; the responses stored under its prefix.
fn bucket_view(
    effective: &crate::roots::Roots,
    entry: &RootEntry,
    count: &dyn Fn(&str) -> (u64, u64, u64),
) -> RootView {
    let url = ObjectUrl::parse(entry.path()).map(|u| u.to_string()).ok();
    let in_use = url
        .as_ref()
        .filter(|u| effective.buckets().iter().any(|b| &b.url.to_string() == *u));
    let problem = in_use.is_none().then(|| {
        effective
            .unavailable()
            .iter()
            .find(|u| u.path == entry.path())
            .map_or_else(|| "is listed twice".to_owned(), |u| u.reason.clone())
    });
    let (files, bytes, others) = in_use.map_or((0, 0, 0), |u| count(u));
    RootView {
        retention: entry.retention(),
        others,
        path: entry.path().to_owned(),
        resolved: in_use.cloned(),
        writable: entry.writable(),
        default: false,
        configured: true,
        problem,
        files,
        bytes,
    }
}

/// What the Directories screen's "Add bucket" form sends. The two credential fields mean what
/// the store calls them (see [`BucketForm::settings`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct BucketForm {
    /// `s3://bucket/prefix` (or `gs://`, `az://`).
    pub url: String,
    /// S3-compatible servers (MinIO, SeaweedFS, R2, ...), Azurite, a GCS emulator; empty for the
    /// cloud itself.
    #[serde(default)]
    pub endpoint: String,
    /// S3 only.
    #[serde(default)]
    pub region: String,
    /// S3: the access key ID (saved to the keychain); Azure: the storage account's name;
    /// GCS: unused. Empty: from the environment.
    #[serde(default)]
    pub access_key_id: String,
    /// S3: the secret access key; Azure: the account key; GCS: the service-account key (its
    /// JSON). Saved to the keychain; empty: from the environment.
    #[serde(default)]
    pub secret_access_key: String,
    pub writable: bool,
}

impl BucketForm {
    /// The root entry's settings for the URL's store: (name, value, kept in the keychain).
    fn settings(&self, scheme: &str) -> Vec<(&'static str, &str, bool)> {
        let mut out = vec![("endpoint", self.endpoint.trim(), false)];
        let (id, secret) = (self.access_key_id.trim(), self.secret_access_key.trim());
        match scheme {
            "s3" => out.extend([
                ("region", self.region.trim(), false),
                ("accessKeyId", id, true),
                ("secretAccessKey", secret, true),
            ]),
            "gs" => out.push(("serviceAccountKey", secret, true)),
            _ => out.extend([("account", id, false), ("accessKey", secret, true)]),
        }
        out.retain(|(_, value, _)| !value.is_empty());
        out
    }
}

/// How long adding a bucket may wait for it to answer.
const BUCKET_CHECK: std::time::Duration = std::time::Duration::from_secs(10);

/// Allows a bucket prefix: checked first (the store must answer a listing of the prefix with
/// these settings), then its keys saved to the keychain and the entry written with
/// `${keyring:...}` references (the keys are taken back if the file cannot be written).
pub async fn add_bucket_root(engine: &Engine, form: &BucketForm) -> Result<(), ControlError> {
    let url = ObjectUrl::parse(form.url.trim())
        .map_err(|e| ControlError::invalid(format!("'{}': {e}", form.url.trim())))?;
    let shown = url.to_string();
    let settings = form.settings(url.scheme);
    let plain: serde_json::Map<String, serde_json::Value> = settings
        .iter()
        .map(|(key, value, _)| ((*key).to_owned(), (*value).into()))
        .collect();
    let bucket = Bucket::from_entry(&shown, form.writable, &plain, &NoKeychain)
        .map_err(|e| ControlError::invalid(e.to_string()))?;
    check_bucket(&bucket).await?;
    let mut extra = plain.clone();
    let mut saved = Vec::new();
    for (key, value, _) in settings.iter().filter(|(_, _, secret)| *secret) {
        let name = secrets::secret_name(&format!("bucket-{}", url.bucket), key);
        if let Err(why) = engine.secrets.set_secret(&name, value) {
            secrets::forget(engine, &saved);
            return Err(ControlError::new(ErrorCode::SecretUnavailable, why));
        }
        extra.insert((*key).into(), format!("${{keyring:{name}}}").into());
        saved.push(name);
    }
    let written = append_root(
        engine,
        RootEntry::Full {
            path: shown,
            writable: form.writable,
            extra,
        },
    )
    .await;
    if written.is_err() {
        secrets::forget(engine, &saved);
    }
    written
}

/// Lists at most one key under the bucket root's prefix: the settings work.
async fn check_bucket(bucket: &Bucket) -> Result<(), ControlError> {
    use futures::StreamExt;
    let prefix = bucket.url.key();
    let first = tokio::time::timeout(BUCKET_CHECK, async {
        bucket.store.list(Some(&prefix)).next().await.transpose()
    })
    .await;
    match first {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err(ControlError::new(
            ErrorCode::PathUnusable,
            format!("{} cannot be used with these settings: {e}", bucket.url),
        )),
        Err(_) => Err(ControlError::new(
            ErrorCode::PathUnusable,
            format!(
                "{} did not answer within {} s; check the endpoint",
                bucket.url,
                BUCKET_CHECK.as_secs()
            ),
        )),
    }
}

fn entry(path: String, writable: bool) -> RootEntry {
    if writable {
        RootEntry::Path(path)
    } else {
        RootEntry::Full {
            path,
            writable,
            extra: serde_json::Map::new(),
        }
    }
}

/// The index of the configured root that is `path` (as written, or the same directory).
fn position(roots: &[RootEntry], path: &str) -> Result<usize, edit::EditError> {
    let wanted = canonical(path);
    roots
        .iter()
        .position(|r| r.path() == path || (wanted.is_some() && canonical(r.path()) == wanted))
        .ok_or_else(|| edit::EditError::Invalid(format!("'{path}' is not an allowed directory")))
}

/// Allows `path`, an existing directory. While no directory is configured, Offload uses its
/// built-in one; that one is written down first, so adding a directory takes nothing away.
pub async fn add_root(engine: &Engine, path: &str, writable: bool) -> Result<(), ControlError> {
    let full = expand_tilde(path.trim());
    if !full.is_absolute() {
        return Err(ControlError::invalid(format!(
            "'{path}' is not an absolute path; choose the folder with the picker"
        )));
    }
    let canonical = std::fs::canonicalize(&full).map_err(|e| {
        ControlError::new(ErrorCode::PathNotFound, format!("cannot use '{path}': {e}"))
    })?;
    if !canonical.is_dir() {
        return Err(ControlError::new(
            ErrorCode::PathUnusable,
            format!("'{path}' is not a directory"),
        ));
    }
    append_root(engine, entry(canonical.display().to_string(), writable)).await
}

/// Adds `new` to the configured roots, refused when it is already there. While no root is
/// configured, Offload uses its built-in one; that one is written down first, so adding a root
/// takes nothing away.
async fn append_root(engine: &Engine, new: RootEntry) -> Result<(), ControlError> {
    let builtin: Vec<RootEntry> = engine
        .roots()
        .list()
        .iter()
        .map(|r| entry(r.path.display().to_string(), r.writable))
        .collect();
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        if roots.is_empty() {
            roots = builtin;
        }
        if position(&roots, new.path()).is_ok() {
            return Err(edit::EditError::Invalid(format!(
                "'{}' is already allowed",
                new.path()
            )));
        }
        roots.push(new);
        edit::set_roots(doc, &roots)
    })
    .await
}

pub async fn remove_root(engine: &Engine, path: &str) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        roots.remove(position(&roots, path)?);
        edit::set_roots(doc, &roots)
    })
    .await
}

/// Makes `path` the default directory (it moves first in the list); it must be writable.
pub async fn set_default_root(engine: &Engine, path: &str) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        let root = roots.remove(position(&roots, path)?);
        if !root.writable() {
            return Err(edit::EditError::Invalid(format!(
                "'{path}' is read-only; make it writable before making it the default"
            )));
        }
        roots.insert(0, root);
        edit::set_roots(doc, &roots)
    })
    .await
}

pub async fn set_root_writable(
    engine: &Engine,
    path: &str,
    writable: bool,
) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        let at = position(&roots, path)?;
        roots[at] = match roots[at].clone() {
            RootEntry::Full { path, extra, .. } if !extra.is_empty() => RootEntry::Full {
                path,
                writable,
                extra,
            },
            other => entry(other.path().to_owned(), writable),
        };
        edit::set_roots(doc, &roots)
    })
    .await
}

/// Sets (or, with `None`, removes) the retention rule of the root `path`; it must be writable
/// (Offload deletes nothing in a read-only root).
pub async fn set_root_retention(
    engine: &Engine,
    path: &str,
    retention: Option<Retention>,
) -> Result<(), ControlError> {
    if let Some(r) = &retention {
        if r.days == Some(0) {
            return Err(ControlError::invalid("keep responses for at least one day"));
        }
        if r.max_gb.is_some_and(|g| !(g > 0.0 && g.is_finite())) {
            return Err(ControlError::invalid(
                "the size limit must be a number of gigabytes above 0",
            ));
        }
    }
    let retention = retention.filter(Retention::is_on);
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        let at = position(&roots, path)?;
        let (path, writable, mut extra) = match roots[at].clone() {
            RootEntry::Path(path) => (path, true, serde_json::Map::new()),
            RootEntry::Full {
                path,
                writable,
                extra,
            } => (path, writable, extra),
        };
        match &retention {
            Some(_) if !writable => {
                return Err(edit::EditError::Invalid(format!(
                    "'{path}' is read-only: Offload deletes nothing there"
                )));
            }
            Some(rule) => {
                extra.insert(
                    "retention".into(),
                    serde_json::to_value(rule)
                        .map_err(|e| edit::EditError::Invalid(e.to_string()))?,
                );
            }
            None => {
                extra.remove("retention");
            }
        }
        roots[at] = if extra.is_empty() {
            entry(path, writable)
        } else {
            RootEntry::Full {
                path,
                writable,
                extra,
            }
        };
        edit::set_roots(doc, &roots)
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::BucketForm;

    fn form(url: &str) -> BucketForm {
        BucketForm {
            url: url.into(),
            endpoint: " http://127.0.0.1:9 ".into(),
            region: "eu-west-1".into(),
            access_key_id: "id".into(),
            secret_access_key: "secret".into(),
            writable: false,
        }
    }

    #[test]
    fn the_forms_credentials_mean_what_each_store_calls_them() {
        assert_eq!(
            form("s3://b/p").settings("s3"),
            [
                ("endpoint", "http://127.0.0.1:9", false),
                ("region", "eu-west-1", false),
                ("accessKeyId", "id", true),
                ("secretAccessKey", "secret", true),
            ]
        );
        assert_eq!(
            form("az://c/p").settings("az"),
            [
                ("endpoint", "http://127.0.0.1:9", false),
                ("account", "id", false),
                ("accessKey", "secret", true),
            ]
        );
        assert_eq!(
            form("gs://b/p").settings("gs"),
            [
                ("endpoint", "http://127.0.0.1:9", false),
                ("serviceAccountKey", "secret", true),
            ]
        );
        let empty = BucketForm {
            endpoint: String::new(),
            access_key_id: " ".into(),
            secret_access_key: String::new(),
            ..form("gs://b/p")
        };
        assert!(empty.settings("gs").is_empty());
    }
}
