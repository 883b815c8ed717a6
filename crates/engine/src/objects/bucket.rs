//! A bucket root: where it is, whether it is writable, and the client that reaches it.

use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3Builder, S3CopyIfNotExists};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::{BackoffConfig, ClientOptions, ObjectStore, RetryConfig};
use serde_json::{Map, Value};

use super::key::ObjectUrl;
use super::reader::Fetched;
use crate::config::{SecretSource, interpolate};

/// How long one request may take before it fails (a 1 GB scan is many requests, each short).
const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// How long connecting may take: a down endpoint is known within this.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// One configured bucket root.
#[derive(Clone)]
pub struct Bucket {
    /// `s3://bucket/prefix`, as configured (trailing slash removed).
    pub url: ObjectUrl,
    pub writable: bool,
    /// The custom endpoint (S3-compatible servers, Azurite, a GCS emulator), if one was given.
    pub endpoint: Option<String>,
    pub store: Arc<dyn ObjectStore>,
    /// What reads from this bucket cost so far.
    pub fetched: Arc<Fetched>,
}

impl std::fmt::Debug for Bucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bucket")
            .field("url", &self.url.to_string())
            .field("writable", &self.writable)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Bucket {
    fn eq(&self, other: &Self) -> bool {
        self.url == other.url && self.writable == other.writable && self.endpoint == other.endpoint
    }
}

#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct BucketError(pub String);

impl Bucket {
    /// Builds the client of a bucket root from its configuration entry: `path` (the URL),
    /// `writable`, and the store's settings in `extra` — `endpoint`, `region`, `accessKeyId`,
    /// `secretAccessKey`, `sessionToken` (S3), `serviceAccountKey` (GCS), `account`,
    /// `accessKey` (Azure) — each of which may be `${keyring:NAME}` or `${env:NAME}`. What the
    /// entry does not say comes from the standard environment (`AWS_ACCESS_KEY_ID`, …).
    /// Nothing is contacted here.
    pub fn from_entry(
        path: &str,
        writable: bool,
        extra: &Map<String, Value>,
        secrets: &dyn SecretSource,
    ) -> Result<Self, BucketError> {
        let url = ObjectUrl::parse(path).map_err(|e| BucketError(e.to_string()))?;
        let setting = |name: &str| -> Result<Option<String>, BucketError> {
            match extra.get(name) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => interpolate(s, secrets)
                    .map(Some)
                    .map_err(|e| BucketError(format!("{name}: {e}"))),
                Some(_) => Err(BucketError(format!("{name} must be a string"))),
            }
        };
        let endpoint = setting("endpoint")?;
        let client = ClientOptions::new()
            .with_timeout(REQUEST_TIMEOUT)
            .with_connect_timeout(CONNECT_TIMEOUT)
            .with_allow_http(
                endpoint
                    .as_deref()
                    .is_some_and(|e| e.starts_with("http://")),
            );
        let retry = RetryConfig {
            backoff: BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(1),
                base: 2.0,
            },
            max_retries: 2,
            retry_timeout: Duration::from_secs(10),
        };
        let root = format!("{}://{}", url.scheme, url.bucket);
        let store: Arc<dyn ObjectStore> = match url.scheme {
            "s3" => {
                let mut b = AmazonS3Builder::from_env()
                    .with_url(&root)
                    .with_client_options(client)
                    .with_retry(retry)
                    // Large answers are uploaded under a hidden name, then copied to their
                    // name only if nothing is there yet.
                    .with_copy_if_not_exists(S3CopyIfNotExists::Multipart);
                if let Some(e) = &endpoint {
                    b = b.with_endpoint(e).with_allow_http(e.starts_with("http://"));
                }
                if let Some(v) = setting("region")? {
                    b = b.with_region(v);
                }
                if let Some(v) = setting("accessKeyId")? {
                    b = b.with_access_key_id(v);
                }
                if let Some(v) = setting("secretAccessKey")? {
                    b = b.with_secret_access_key(v);
                }
                if let Some(v) = setting("sessionToken")? {
                    b = b.with_token(v);
                }
                Arc::new(b.build().map_err(|e| BucketError(e.to_string()))?)
            }
            "gs" => {
                let mut b = GoogleCloudStorageBuilder::from_env()
                    .with_url(&root)
                    .with_client_options(client)
                    .with_retry(retry);
                if let Some(e) = &endpoint {
                    b = b.with_base_url(e.trim_end_matches('/'));
                }
                if let Some(v) = setting("serviceAccountKey")? {
                    b = b.with_service_account_key(v);
                }
                Arc::new(b.build().map_err(|e| BucketError(e.to_string()))?)
            }
            _ => {
                let mut b = MicrosoftAzureBuilder::from_env()
                    .with_url(&root)
                    .with_client_options(client)
                    .with_retry(retry);
                if let Some(e) = &endpoint {
                    b = b
                        .with_endpoint(e.clone())
                        .with_allow_http(e.starts_with("http://"));
                }
                if let Some(v) = setting("account")? {
                    b = b.with_account(v);
                }
                if let Some(v) = setting("accessKey")? {
                    b = b.with_access_key(v);
                }
                Arc::new(b.build().map_err(|e| BucketError(e.to_string()))?)
            }
        };
        Ok(Self {
            url,
            writable,
            endpoint,
            store,
            fetched: Arc::default(),
        })
    }

    /// Whether `url` lies inside this root.
    pub fn holds(&self, url: &ObjectUrl) -> bool {
        url.is_inside(&self.url)
    }

    /// A hidden place under the root for Offload's own objects (records, uploads in progress).
    pub fn hidden(&self, name: &str) -> ObjectUrl {
        self.url.join(".offload").join(name)
    }
}
