//! Offload as a gateway: upstream tools listed as tools of a client's own (`exposure`, under
//! the names `names` makes), their definitions pinned until the user reviews a change
//! (`pins`), and where upstream prompts and resources a client sees lead (`routes`). Decides
//! only; the server module lists and calls.

pub mod exposure;
pub mod names;
pub mod pins;
pub mod routes;

pub use exposure::{Expose, Exposed, Exposure, Mode, ServerInput, decide};
pub use pins::{Held, Pins};
pub use routes::{Route, Routes};
