//! Finding the tool a request describes: "what changed in the repo" should find `git_diff`,
//! "remember that Ana likes tea" `add_observations`. A catalog is indexed once ([`Index::new`]);
//! each search ([`Index::search`]) ranks its tools with BM25F — the request's words, stemmed
//! (Snowball, English), weighed by how rare they are in the catalog and by where they occur: a
//! word of the tool's name counts more than one of its description, and a long description does
//! not win by length. A word the catalog does not have is matched to its closest word (typos).
//! A request that is a tool's name (`tool`, `server__tool`, `server/tool`, `server.tool`) puts
//! that tool first, for sure.
//!
//! Words alone miss requests in other words than the catalog's, so each tool's meaning counts
//! too ([`meaning`]: a static vector distilled from the sentence model all-MiniLM-L6-v2): a hit's
//! rank is half its word score, half how close it is in meaning (each scaled among the
//! catalog). When no tool has any word of the request, the closest in meaning are offered as
//! guesses ([`Hit::guess`]).
//!
//! A caller with a sentence model (`offload-embed`) gives the index each tool's vector
//! ([`Index::with_sentences`], made from [`Index::meaning_text`] split by [`meaning::pieces`]) and
//! each search the request's ([`Index::search_with`]): then every tool is ranked, by words and
//! that meaning together ([`Fusion::SENTENCES`]), a tool none of whose words the request has too.
//! [`Index::parts`] gives a search's parts before they are ranked, so a bench can rank them with
//! any [`Fusion`].
//!
//! Each hit carries a confidence: the mean of the share of the request's weight (the rarity of
//! its words) that the tool matched and its closeness in meaning (the cosine, 0 if negative); 1
//! for an exact name.

mod index;
pub mod meaning;
mod typos;
mod words;

pub use index::{Doc, Fusion, Hit, Index, Parts};
pub use words::{Words, stem_words};

#[cfg(test)]
mod tests;
