//! The process's TLS crypto provider, for every HTTPS client and server in the engine.

/// Makes ring the process's TLS provider (once; later calls do nothing). It is the only one in
/// the build (object storage signs with it; rmcp's HTTP client is built without a provider of
/// its own), and a reqwest client built without one panics: the engine's clients start from
/// [`http_client`], and rmcp's are built after this ran.
pub fn install_crypto_provider() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reqwest client builder, the process's TLS provider installed first.
pub fn http_client() -> reqwest::ClientBuilder {
    install_crypto_provider();
    reqwest::Client::builder()
}
