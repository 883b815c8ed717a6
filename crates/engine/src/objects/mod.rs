//! Roots in object storage: a bucket prefix (`s3://bucket/prefix`, `gs://…`, `az://…`) used like
//! an allowed directory, through the `object_store` crate.
//!
//! - `bucket`: a configured bucket root — its URL split into bucket and prefix, its client
//!   (endpoint, region, credentials from the entry, the keychain or the standard environment),
//!   with short timeouts and few retries so a down endpoint answers within seconds.
//! - `key`: the path guard for keys: a URL is inside a bucket root when its bucket is the root's
//!   and its key starts with the root's prefix, segment by segment; `.`/`..` segments, empty
//!   segments, backslashes, control characters and percent-encoded dots, slashes and backslashes
//!   are refused, never interpreted.
//! - `reader`: an object read like a file, with ranged GETs pinned to the object's version
//!   (ETag), a small chunk cache and read-ahead for scans; it counts the bytes it fetched.
//! - `writer`: storing a response in a bucket root without ever replacing an object.
//! - `shared`: a small JSON document replicas share (`http.state`): snapshots checked for a
//!   newer version in the background, changes by conditional PUT.

mod bucket;
mod key;
mod reader;
mod shared;
mod writer;

pub use bucket::Bucket;
pub use key::{ObjectUrl, is_object_url};
pub use reader::Object;
pub use shared::{SharedObject, state_bucket};
pub use writer::{WriteError, put_new};

#[cfg(test)]
mod tests;
