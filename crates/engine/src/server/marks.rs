//! What a call carries in its request's extensions for the parts that serve it: the marks
//! dispatch, the rounds and `run_script` leave, and the relay reads.

use std::sync::Arc;

use rmcp::ErrorData as McpError;

/// Where a call notes that its upstream needed a capability the client did not declare (the
/// upstream's `-32021`): the client gets that error rather than a tool error.
#[derive(Clone, Default)]
pub(crate) struct MissingCapability(pub Arc<std::sync::Mutex<Option<McpError>>>);

/// Where `run_script` notes its run's number, which the calls its script made carry too.
#[derive(Clone, Default)]
pub(crate) struct ScriptRun(pub Arc<std::sync::atomic::AtomicU64>);

/// Marks a call whose upstream's questions go to its client in `input_required` rounds.
#[derive(Clone)]
pub(crate) struct Asking(pub crate::rounds::Asks);
