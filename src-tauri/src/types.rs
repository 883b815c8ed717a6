//! The TypeScript declarations of what crosses the IPC boundary, generated from the Rust types
//! into `ui/src/lib/types.ts` and checked for drift by a test (`cargo test` fails when the file
//! is stale; `OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types` rewrites it).

use offload_engine::config::Retention;
use offload_engine::control::ClientView;
use offload_engine::control::Held;
use offload_engine::control::ListingCost;
use offload_engine::control::Summary;
use offload_engine::control::{
    Activity, ActivitySeries, BucketForm, CallView, ClientChange, ClientEntry, ColumnView,
    ControlError, CreatedToken, ExposedView, FileInfo, ImportReport, Imported, NewSecret,
    OffersView, Overview, Page, Place, PlainSecret, PromptView, QueryView, ResourceView,
    ResponseView, Responses, RootView, SchemaView, SecretRef, Series, ServerCounts, ServerSpec,
    ServerView, SessionTs, SharingView, SlowCall, Snippet, Span, Status, Swept, TokenView,
    ToolView, ToolsView, Trial, UrlPatternView, UrlsView,
};
use offload_engine::control::{Event, EventKind};
use offload_engine::control::{LogLine, PathRefusal, Refusal, StderrLine};
use offload_engine::http::ServingState;
use ts_rs::{Config, TS};

/// Where the generated declarations live, from the repository root.
pub const PATH: &str = "ui/src/lib/types.ts";

/// The whole generated file.
pub fn declarations() -> String {
    let cfg = Config::new().with_large_int("number");
    let mut out = String::from(
        "// Generated from the Rust types by src-tauri/src/types.rs. Do not edit by hand:\n\
         // run `OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types`.\n",
    );
    let decls = [
        Status::decl(&cfg),
        ServingState::decl(&cfg),
        TokenView::decl(&cfg),
        SharingView::decl(&cfg),
        ClientEntry::decl(&cfg),
        CreatedToken::decl(&cfg),
        ServerCounts::decl(&cfg),
        Overview::decl(&cfg),
        SessionTs::decl(&cfg),
        Activity::decl(&cfg),
        Span::decl(&cfg),
        Series::decl(&cfg),
        SlowCall::decl(&cfg),
        ActivitySeries::decl(&cfg),
        ServerSpec::decl(&cfg),
        ServerView::decl(&cfg),
        Place::decl(&cfg),
        SecretRef::decl(&cfg),
        PlainSecret::decl(&cfg),
        NewSecret::decl(&cfg),
        ToolView::decl(&cfg),
        PromptView::decl(&cfg),
        ResourceView::decl(&cfg),
        OffersView::decl(&cfg),
        LogLine::decl(&cfg),
        Refusal::decl(&cfg),
        PathRefusal::decl(&cfg),
        StderrLine::decl(&cfg),
        Trial::decl(&cfg),
        ToolsView::decl(&cfg),
        ExposedView::decl(&cfg),
        ListingCost::decl(&cfg),
        Held::decl(&cfg),
        RootView::decl(&cfg),
        Retention::decl(&cfg),
        Swept::decl(&cfg),
        BucketForm::decl(&cfg),
        UrlsView::decl(&cfg),
        UrlPatternView::decl(&cfg),
        ResponseView::decl(&cfg),
        Responses::decl(&cfg),
        CallView::decl(&cfg),
        FileInfo::decl(&cfg),
        ColumnView::decl(&cfg),
        SchemaView::decl(&cfg),
        Page::decl(&cfg),
        QueryView::decl(&cfg),
        Summary::decl(&cfg),
        EventKind::decl(&cfg),
        Event::decl(&cfg),
        ClientView::decl(&cfg),
        ClientChange::decl(&cfg),
        Snippet::decl(&cfg),
        Imported::decl(&cfg),
        ImportReport::decl(&cfg),
        ControlError::decl(&cfg),
    ];
    for decl in decls {
        out.push_str("\nexport ");
        out.push_str(&decl);
        out.push('\n');
    }
    out
}

/// Fails when the generated file at `relative` (from the repository root) is not `want`;
/// rewrites it instead with `OFFLOAD_UPDATE_TYPES` set.
#[cfg(test)]
pub(crate) fn generated_file_is_current(relative: &str, want: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(relative);
    if std::env::var_os("OFFLOAD_UPDATE_TYPES").is_some() {
        std::fs::write(&path, want).expect("write the generated file");
        return;
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        have == want,
        "{relative} is stale: run `OFFLOAD_UPDATE_TYPES=1 cargo test -p offload-app types`"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typescript_declarations_are_up_to_date() {
        generated_file_is_current(PATH, &declarations());
    }
}
