//! The process's TLS crypto provider, for every HTTPS client and server in the engine.

/// Makes aws-lc-rs the process's TLS provider (once; later calls do nothing). Two providers are
/// in the build (object storage's HTTP client brings ring), and rustls picks no default when it
/// has two: any library that asks for the default would otherwise panic.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
    });
}
