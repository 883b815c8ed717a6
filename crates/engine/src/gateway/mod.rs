//! Offload as a gateway: upstream tools listed as tools of a client's own (`exposure`, under
//! the names `names` makes), and their definitions pinned until the user reviews a change
//! (`pins`). Decides only; the server module lists and calls.

pub mod available;
pub mod exposure;
pub mod names;
pub mod pins;

pub use available::{exposure, held_count, needs_tasks, refusal, usable};
pub use exposure::{Expose, Exposed, Exposure, Mode, ServerInput, decide};
pub use names::Prefix;
pub use pins::{Held, Pins};
