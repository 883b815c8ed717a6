//! Logging for every Offload process (the shim, `offload serve`, the desktop app).

/// Logs to stderr, or to `OFFLOAD_LOG_FILE` when set; level from `OFFLOAD_LOG` (default info).
///
/// rmcp logs whole messages at debug level, and messages carry tool arguments and results that
/// may hold secrets; so rmcp stays at info unless `OFFLOAD_LOG` names it explicitly.
pub fn init() {
    use tracing_subscriber::EnvFilter;
    let mut spec = std::env::var("OFFLOAD_LOG").unwrap_or_else(|_| "info".into());
    if !spec.contains("rmcp") {
        spec.push_str(",rmcp=info");
    }
    let filter = EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new("info,rmcp=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false);
    match std::env::var_os("OFFLOAD_LOG_FILE") {
        Some(path) => match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => builder.with_writer(std::sync::Mutex::new(file)).init(),
            Err(_) => builder.with_writer(std::io::stderr).init(),
        },
        None => builder.with_writer(std::io::stderr).init(),
    }
}
