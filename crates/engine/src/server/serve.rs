//! Serving one MCP session over a transport until the client goes away.

use std::sync::Arc;

use rmcp::ServiceExt;

use super::OffloadServer;
use crate::Engine;

/// Serving a session is the server's work; it is a method of the engine for its callers.
impl Engine {
    /// Serves one MCP session over `transport` until the client goes away. A client that
    /// leaves before the handshake is not an error.
    pub async fn serve<T, E, A>(self: &Arc<Self>, transport: T) -> Result<(), String>
    where
        T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        self.serve_with(transport, None).await
    }

    /// `serve` with the client's own choice of how upstream tools are shown
    /// (`offload mcp --expose`); the configuration's otherwise.
    pub async fn serve_with<T, E, A>(
        self: &Arc<Self>,
        transport: T,
        expose: Option<crate::gateway::Expose>,
    ) -> Result<(), String>
    where
        T: rmcp::transport::IntoTransport<rmcp::RoleServer, E, A>,
        E: std::error::Error + Send + Sync + 'static,
    {
        let server = OffloadServer::new(self.clone()).with_expose(expose);
        let running = match server.serve(transport).await {
            Ok(running) => running,
            Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
                tracing::info!("the client closed the connection before the MCP handshake");
                return Ok(());
            }
            Err(e) => return Err(format!("MCP session did not start: {e}")),
        };
        let client = running
            .peer()
            .peer_info()
            .map(|info| info.client_info.clone());
        let (name, version) = client.map_or_else(
            || ("unknown".to_owned(), String::new()),
            |c| (c.name, c.version),
        );
        let _open = self.sessions.open(&name, &version);
        running
            .waiting()
            .await
            .map(|_| ())
            .map_err(|e| format!("MCP session ended abnormally: {e}"))
    }
}
