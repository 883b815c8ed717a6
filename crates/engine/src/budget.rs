//! The upstream message budget (`limits.maxUpstreamMessageBytes`): how big a call's arguments
//! may be as JSON, and the error that says how to send less.

use crate::ToolError;

/// How many bytes a value takes as JSON, without building the text.
pub use offload_wire::json_size;

/// The arguments must fit the upstream message budget; `list_hint` names the list to batch.
pub fn check_message_size(
    budget: u64,
    args: &serde_json::Map<String, serde_json::Value>,
    list_hint: Option<&str>,
) -> Result<(), ToolError> {
    check_size(budget, json_size(args), list_hint.is_some())
}

/// Arguments of `size` bytes must fit the upstream message `budget`.
pub fn check_size(budget: u64, size: u64, list: bool) -> Result<(), ToolError> {
    if size <= budget {
        return Ok(());
    }
    Err(too_large(budget, size, list, false))
}

/// The error for arguments over the budget; `partial` when building them stopped at `size`.
pub fn too_large(budget: u64, size: u64, list: bool, partial: bool) -> ToolError {
    let hint = if list {
        " Send the list in parts with batch_size."
    } else {
        " Send less, or pass a list with call_tool_with_file_content and batch_size."
    };
    let (size_text, budget_text) = (
        offload_formats::units::human_bytes(size),
        offload_formats::units::human_bytes(budget),
    );
    let what = if partial {
        // Building them stopped as soon as they were over: their full size is unknown.
        "the arguments are larger than".to_owned()
    } else if size_text == budget_text {
        format!("the arguments are {size} bytes, more than")
    } else {
        format!("the arguments are {size_text}, more than")
    };
    let budget_text = if !partial && size_text == budget_text {
        format!("{budget} bytes")
    } else {
        budget_text
    };
    ToolError::new(
        crate::ErrorCode::ArgumentsTooLarge,
        format!(
            "{what} the upstream message budget of {budget_text} (limits.maxUpstreamMessageBytes; many servers refuse messages over 10 MiB).{hint}"
        ),
    )
    .with("bytes", size)
}
