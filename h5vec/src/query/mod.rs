//! Queries: which rows of a vector or table match a [`Filter`].
//!
//! | file | holds |
//! |---|---|
//! | `filter.rs` | [`col`], [`Filter`], [`Value`]: the predicate tree |
//! | `parse.rs` | the `--where` text syntax: `FromStr` and `Display` for [`Filter`] |

mod filter;
mod parse;

pub use filter::{col, Column, Filter, Value};
