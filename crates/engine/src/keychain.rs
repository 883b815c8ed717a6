//! The OS keychain, where `${keyring:NAME}` values live: entries of service `offload` with the
//! secret's name as the user, in the platform's store (Secret Service on Linux, Keychain on
//! macOS, Credential Manager on Windows) as the `keyring` crate chooses it.
//!
//! The store is opened on first use, so a process that never meets a `${keyring:}` reference
//! never talks to the keychain (a headless `offload mcp` without a session bus keeps working).

use std::sync::{Arc, OnceLock};

use keyring_core::{CredentialStore, Entry, Error};

use crate::config::SecretSource;

/// The keychain service every Offload secret is filed under.
pub const SERVICE: &str = "offload";

pub struct Keychain {
    store: OnceLock<Result<Arc<CredentialStore>, String>>,
}

impl Keychain {
    /// The platform's keychain, opened when first needed.
    pub fn platform() -> Self {
        Self {
            store: OnceLock::new(),
        }
    }

    /// A keychain over a given store (tests use `keyring_core::mock`).
    pub fn with_store(store: Arc<CredentialStore>) -> Self {
        Self {
            store: OnceLock::from(Ok(store)),
        }
    }

    fn entry(&self, name: &str) -> Result<Entry, String> {
        check_name(name)?;
        let store = self.store.get_or_init(open_platform_store).as_ref()?;
        store
            .build(SERVICE, name, None)
            .map_err(|e| format!("the keychain refused the entry '{name}': {e}"))
    }
}

fn open_platform_store() -> Result<Arc<CredentialStore>, String> {
    // The keyring crate sets the platform's store as keyring-core's default on first use.
    if let Err(e) = keyring::Entry::store_status() {
        return Err(format!("the OS keychain is not available: {e}"));
    }
    keyring_core::get_default_store().ok_or_else(|| "the OS keychain is not available".into())
}

/// Secret names are what `${keyring:NAME}` can hold: letters, digits, `_`, `-` and `.`.
pub fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty()
        || name.len() > 200
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        return Err(format!(
            "'{name}' cannot name a secret: use letters, digits, '_', '-' and '.'"
        ));
    }
    Ok(())
}

impl SecretSource for Keychain {
    fn secret(&self, name: &str) -> Result<Option<String>, String> {
        match self.entry(name)?.get_password() {
            Ok(v) => Ok(Some(v)),
            Err(Error::NoEntry) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn set_secret(&self, name: &str, value: &str) -> Result<(), String> {
        self.entry(name)?
            .set_password(value)
            .map_err(|e| format!("the keychain did not save '{name}': {e}"))
    }

    fn delete_secret(&self, name: &str) -> Result<(), String> {
        match self.entry(name)?.delete_credential() {
            Ok(()) | Err(Error::NoEntry) => Ok(()),
            Err(e) => Err(format!("the keychain did not remove '{name}': {e}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_saved_read_and_removed_by_name() {
        let keychain = Keychain::with_store(keyring_core::mock::Store::new().unwrap());
        assert_eq!(keychain.secret("api_key").unwrap(), None);
        keychain.set_secret("api_key", "s3cret").unwrap();
        assert_eq!(
            keychain.secret("api_key").unwrap().as_deref(),
            Some("s3cret")
        );
        keychain.set_secret("api_key", "rotated").unwrap();
        assert_eq!(
            keychain.secret("api_key").unwrap().as_deref(),
            Some("rotated")
        );
        keychain.delete_secret("api_key").unwrap();
        assert_eq!(keychain.secret("api_key").unwrap(), None);
        keychain.delete_secret("api_key").unwrap();
    }

    #[test]
    fn names_that_cannot_be_referenced_are_refused() {
        let keychain = Keychain::with_store(keyring_core::mock::Store::new().unwrap());
        for bad in ["", "a b", "a}b", "x:y", "ü", &"n".repeat(201)] {
            let e = keychain.set_secret(bad, "v").unwrap_err();
            assert!(e.contains("cannot name a secret"), "{bad}: {e}");
        }
    }
}
