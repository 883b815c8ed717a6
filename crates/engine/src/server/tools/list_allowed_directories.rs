//! `list_allowed_directories`: the directories Offload may use and the default one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::prelude::*;
use crate::roots::Roots;
use crate::server::answer;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {}

pub struct ListAllowedDirectories;

impl OwnTool for ListAllowedDirectories {
    type Params = Params;
    const NAME: &'static str = "list_allowed_directories";
    const TITLE: &'static str = "List allowed directories";
    const DESCRIPTION: &'static str = "The directories Offload may use (the user chooses them) and the default one, where \
         answers are stored and relative paths resolve.";
    const HINTS: Hints = Hints::Reads;
    const OUTPUT: Option<Output> = Some(Output::of::<AllowedDirectories>(
        "directories default_directory",
    ));

    async fn call(engine: &Arc<Engine>, _: Self::Params, _: &Ctx) -> CallToolResult {
        list_allowed_directories(&engine.roots())
    }
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct AllowedDirectories {
    pub directories: Vec<Directory>,
    /// Where stored responses go and relative paths resolve; null when every root is read-only.
    pub default_directory: Option<String>,
    /// Configured directories that are not in use (missing, not a directory), with the reason.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unavailable: Vec<crate::roots::Unavailable>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct Directory {
    pub path: String,
    pub writable: bool,
    pub default: bool,
}

fn list_allowed_directories(roots: &Roots) -> CallToolResult {
    let default = roots.default_dir();
    let directories: Vec<Directory> = roots
        .list()
        .iter()
        .map(|r| Directory {
            path: r.path.display().to_string(),
            writable: r.writable,
            default: Some(r.path.as_path()) == default,
        })
        .chain(roots.buckets().iter().map(|b| Directory {
            path: b.url.to_string(),
            writable: b.writable,
            default: false,
        }))
        .collect();
    let text = directories
        .iter()
        .map(|d| {
            let mut flags = vec![if d.writable {
                "read-write"
            } else {
                "read-only"
            }];
            if d.default {
                flags.push("default");
            }
            format!("{} ({})", d.path, flags.join(", "))
        })
        .chain(
            roots
                .unavailable()
                .iter()
                .map(|u| format!("{} (not available: {})", u.path, u.reason)),
        )
        .collect::<Vec<_>>()
        .join("\n");
    let out = AllowedDirectories {
        directories,
        default_directory: default.map(|p| p.display().to_string()),
        unavailable: roots.unavailable().to_vec(),
    };
    answer::structured(&out, text)
}
