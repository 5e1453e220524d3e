//! Reading the derive input: parse it into an AST with its attributes
//! (`ast.rs`, `attr.rs`, `storage.rs`), validate the rules that span
//! several attributes or fields (`check.rs`), and collect every error on
//! the way (`ctxt.rs`). Expansion (`crate::expand`) sees only valid input.

pub mod ast;
pub mod attr;
mod check;
mod ctxt;
pub mod storage;

pub use ctxt::Ctxt;
