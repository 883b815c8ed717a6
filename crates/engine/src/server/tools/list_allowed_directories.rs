//! `list_allowed_directories`: the directories Offload may use and the default one.

use super::prelude::*;
use crate::server::discovery;

pub struct ListAllowedDirectories;

impl OwnTool for ListAllowedDirectories {
    type Params = params::ListAllowedDirectories;
    const NAME: &'static str = "list_allowed_directories";
    const TITLE: &'static str = "List allowed directories";
    const DESCRIPTION: &'static str = "The directories Offload may use (the user chooses them) and the default one, where \
         answers are stored and relative paths resolve.";
    const HINTS: Hints = Hints::Reads;
    const OUTPUT: Option<Output> = Some(Output::of::<discovery::AllowedDirectories>(
        "directories default_directory",
    ));

    async fn call(engine: &Arc<Engine>, _: Self::Params, _: &Ctx) -> CallToolResult {
        discovery::list_allowed_directories(&engine.roots())
    }
}
